"""Shared classifier behaviour: target encoding and posterior-predictive output."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils import assert_all_finite

from ..models._finite import overflow_free_limit, peak_abs, shrink_rows
from ..utils import check_class_weight, check_weight_total

__all__ = ["_ClassifierMixin"]


def _integral_codes(y):
    """``(classes, codes)`` as ``np.unique(y, return_inverse=True)`` gives them, in O(n), for a
    1-D numeric ``y`` of integral values spanning fewer than ``4 n + 1024``; else None.

    Such targets are binary or multiclass for scikit-learn's target check, so it is not needed; its
    sorts (``np.unique`` and the check's own) are ``O(n log n)`` work a fit can skip.  Two adjacent
    values (0/1 labels) are coded by one comparison, as int8.
    """
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.size and y.dtype.kind in "iuf"):
        return None
    lo, hi = y.min(), y.max()
    if not (np.isfinite(lo) and np.isfinite(hi)) or float(hi) - float(lo) >= 4 * y.size + 1024:
        return None
    if y.dtype.kind == "f" and not np.array_equal(y, np.floor(y)):  # "continuous" for sklearn
        return None
    if float(hi) - float(lo) == 1:  # two labels, both present: no intp copy of y (76 MiB at 10^7)
        return np.array([lo, hi], dtype=y.dtype), (y == hi).view(np.int8)
    if y.dtype.kind == "f":
        k = (y - lo).astype(np.intp)
    elif float(hi) > np.iinfo(np.intp).max:  # uint64 beyond intp
        return None
    else:  # in intp: y - lo in y's own type overflows int8 beyond a range of 127
        k = y.astype(np.intp)
        k -= int(lo)
    present = np.bincount(k) > 0
    classes = (np.flatnonzero(present) + lo).astype(y.dtype)
    if present.all():  # consecutive classes: k is the code (no gather of n codes)
        return classes, k
    return classes, (np.cumsum(present) - 1)[k]


class _ClassifierMixin:
    """``classes_``, encoding, ``predict_proba`` averaged over ``n_predict_draws`` draws."""

    _is_classifier = True
    _classifier_constraints = {
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "n_predict_draws": [Interval(Integral, 1, None, closed="left")],
    }

    def _encode_targets(self, y, weight=None):
        """``(codes, n_classes)``; ``classes_`` from every row (``weight`` plays no part)."""
        found = _integral_codes(y)
        if found is None:
            check_classification_targets(y)
            found = np.unique(y, return_inverse=True)
        self.classes_, codes = found
        if self.classes_.shape[0] < 2:
            raise ValueError(
                f"The target contains only one class ({self.classes_[0]!r}); a "
                "classifier needs samples of at least 2 classes."
            )
        return self._code_targets(codes), self.classes_.shape[0]

    def _row_weights(self, X, y, sample_weight):
        """``sample_weight`` times the weight of each row's class (``class_weight``: finite,
        non-negative values, not all zero; keys not among the classes raise as in
        scikit-learn, unless every class has its weight)."""
        w = super()._row_weights(X, y, sample_weight)
        if self.class_weight is None:
            return w
        if isinstance(self.class_weight, dict):
            check_class_weight(self.class_weight)
        cw = compute_sample_weight(self.class_weight, y)
        w = cw if w is None else w * cw
        check_weight_total(w, "class_weight" if sample_weight is None
                           else "sample_weight times class_weight")
        return w

    def _code_targets(self, codes):
        return codes

    def _intercept_scale(self, y):
        return 10.0 * max(self.prior_scale, 1.0)

    def predict_proba(self, X):
        """Posterior-predictive class probabilities: the mean over ``n_predict_draws`` draws.

        Rows go through in cache-sized chunks (the extra memory does not grow with
        ``n_samples``); float32 ``X`` is computed in float32 (rounding ~1e-7, far below the
        Monte-Carlo error of the average, see ``n_predict_draws``).  Finite, and rows sum to
        one, for any finite input.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            X's float dtype (float32 for float32 X, as scikit-learn's ``LogisticRegression``;
            float64 otherwise).  Deterministic: the draws are evenly spaced over the stored ones.
        """
        return self._predict_on_rows("predict_proba", X)

    def _predict_proba(self, X):
        """In-memory :meth:`predict_proba`."""
        X = self._validate_X_predict(X, ensure_all_finite=False)
        peak = peak_abs(X)  # one pass: finiteness and the overflow check below
        if not np.isfinite(peak):
            assert_all_finite(X, input_name="X", estimator_name=type(self).__name__)
        draws = self._prediction_draws(self.n_predict_draws)
        dtype = X.dtype
        X = shrink_rows(X, overflow_free_limit(self.model_, draws, X.dtype), peak)  # x ~ 1e308
        return self.model_.predict_mean(draws, X).astype(dtype, copy=False)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (floored at the smallest positive float of its dtype;
        X's float dtype, as :meth:`predict_proba`)."""
        return self._predict_on_rows("predict_log_proba", X)

    def _predict_log_proba(self, X):
        """In-memory :meth:`predict_log_proba`."""
        proba = self.predict_proba(X)
        return np.log(np.maximum(proba, np.finfo(proba.dtype).tiny))

    def predict(self, X):
        """Class with the largest posterior-predictive probability."""
        return self._predict_on_rows("predict", X)

    def _predict(self, X):
        """In-memory :meth:`predict`."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
