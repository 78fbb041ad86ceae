"""Shared classifier behaviour: target encoding and posterior-predictive output."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..utils import row_chunks

__all__ = ["_ClassifierMixin"]

_CHUNK_ELEMENTS = 2_000_000  # draws x rows x classes per predict chunk


class _ClassifierMixin:
    """``classes_``, encoding, ``predict_proba`` averaged over all draws."""

    _is_classifier = True
    _classifier_constraints = {
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "n_predict_draws": [Interval(Integral, 1, None, closed="left")],
    }

    def _encode_targets(self, y):
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.shape[0] < 2:
            raise ValueError(
                f"The target contains only one class ({self.classes_[0]!r}); a "
                "classifier needs samples of at least 2 classes."
            )
        return self._code_targets(codes), self.classes_.shape[0]

    def _row_weights(self, X, y, sample_weight):
        """``sample_weight`` times the weight of each row's class (``class_weight``)."""
        w = super()._row_weights(X, y, sample_weight)
        if self.class_weight is None:
            return w
        cw = compute_sample_weight(self.class_weight, y)
        return cw if w is None else w * cw

    def _code_targets(self, codes):
        return codes

    def _intercept_scale(self, y):
        return 10.0 * max(self.prior_scale, 1.0)

    def predict_proba(self, X):
        """Posterior-predictive class probabilities: the mean over ``n_predict_draws`` draws.

        Rows are processed in chunks, so the extra memory does not grow with ``n_samples``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Deterministic: the draws are evenly spaced over the stored ones.
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        draws = self._prediction_draws(self.n_predict_draws)
        out = np.empty((X.shape[0], len(self.classes_)))
        width = draws.shape[0] * len(self.classes_)
        for sl in row_chunks(X.shape[0], width, rows=X.shape[0], elements=_CHUNK_ELEMENTS):
            out[sl] = self.model_.predict_mean(draws, X[sl])
        return out

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (floored at the smallest positive float)."""
        check_is_fitted(self)
        return np.log(np.maximum(self.predict_proba(X), np.finfo(float).tiny))

    def predict(self, X):
        """Class with the largest posterior-predictive probability."""
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
