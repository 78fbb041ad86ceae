"""BayesianLogisticRegression."""

import numpy as np
from sklearn.base import ClassifierMixin

from ..diagnostics import assess
from ..models import LogisticModel
from ..models._finite import ray_outputs
from ._base import _BaseSGMCMC, _store_params
from ._classifier import _ClassifierMixin
from ._docs import CLASSIFIER_PARAMETERS, COMMON_ATTRIBUTES, COMMON_PARAMETERS, REFERENCES, REPORT_NOTES

__all__ = ["BayesianLogisticRegression"]


class BayesianLogisticRegression(_ClassifierMixin, ClassifierMixin, _BaseSGMCMC):
    __doc__ = f"""Bayesian logistic regression sampled by stochastic-gradient MCMC.

    Binary (sigmoid) or multiclass (softmax over ``K`` weight rows) logistic regression with a
    Gaussian prior; ``fit`` finds the mode by L-BFGS, builds the Laplace preconditioner, and draws
    posterior samples.  Predictions average over ``n_predict_draws`` of them.

    Parameters
    ----------
    prior_scale : float, default=1.0
        Standard deviation of the Gaussian prior on every weight, in the units
        of X (standardize X, e.g. ``Pipeline(StandardScaler(), ...)``).  The
        intercepts get a broad ``N(0, (10 max(prior_scale, 1))^2)`` prior.
    fit_intercept : bool, default=True
        Whether to fit intercepts.
{COMMON_PARAMETERS}{CLASSIFIER_PARAMETERS}    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Posterior mean of the weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Posterior mean of the intercepts (zeros if ``fit_intercept=False``).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
{COMMON_ATTRIBUTES}
    See Also
    --------
    sklearn.linear_model.LogisticRegression : point estimate.
    BayesianLinearRegression, BayesianMLPClassifier
    skbayes_sg.diagnostics.summarize : the summary table of any draws array.

    Notes
    -----
    Binary: ``f_i = log(1 + exp(-t_i z_i))``, ``t_i = ±1``; multiclass:
    ``f_i = -log softmax(W x_i + b)[y_i]`` (log-sum-exp, no overflow).  The defaults -- ``sghmc``
    with ``preferential_cv`` (control variates at the mode, rows drawn in proportion to their
    gradient-difference bound), Laplace preconditioning, ``step_size="auto"`` -- give an accurate
    posterior with a small minibatch: control-variate noise vanishes near the mode, preferential
    sampling removes most of what is left (a several times larger automatic step than plain control
    variates, for one extra data pass; see ``benchmarks/results/exact_posterior.md``), and the
    preconditioner makes every direction equally easy.

    Multiclass: the softmax has ``K`` weight rows, but adding one vector to every row (and one
    number to every intercept) leaves the likelihood unchanged, so only the prior identifies
    the rows' common part -- its posterior is as wide as the prior.  The identified quantities
    are the class-centred coefficients ``coef[k] - mean_k coef[k]`` (and centred intercepts):
    ``summary()`` reports them as the groups ``coef_centred`` and ``intercept_centred``, and
    those are what to read; the raw ``coef`` rows' spread includes the unidentified part.
    The default dense Laplace preconditioner (up to 1,000 parameters, :mod:`._laplace`) takes
    the prior-only direction into account, so it mixes as fast as the others.  ``fit`` judges
    convergence on the identified quantities and their class means
    (``diagnostics_["identified_rhat"]``, ``["identified_ess"]``, ``["identified_ess_tail"]``;
    ``["rhat"]`` and ``["ess"]`` stay per raw parameter): an invertible view of the draws in
    which a slowly mixing contrast cannot hide behind the prior-set class sums.

{REPORT_NOTES}
{REFERENCES}
    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skbayes_sg import BayesianLogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(),
    ...                     BayesianLogisticRegression(random_state=0)).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    >>> round(clf.score(X, y), 2) > 0.95
    True
    >>> report = clf[-1].summary()
    >>> list(report.groups), report["coef"]["sd"].shape
    (['coef', 'intercept'], (1, 30))
    >>> print(report)  # doctest: +SKIP
    BayesianLogisticRegression: 4 chains x 1000 draws, 31 parameters; ...
    """

    def __init__(self, *, prior_scale=1.0, fit_intercept=True, sampler="auto",
                 subsampling="auto", batch_size="auto", step_size="auto",
                 preconditioner="auto", n_warmup=500, n_draws=1000, thin=1, n_chains=4,
                 n_jobs=None, random_state=None, verbose=0, init="laplace",
                 max_doublings=3, draws_dtype="float64", class_weight=None,
                 n_predict_draws=100):
        _store_params(self, locals())

    _parameter_constraints: dict = {**_BaseSGMCMC._parameter_constraints,
                                    **_ClassifierMixin._classifier_constraints}

    def _make_model(self, n_features, n_classes):
        return LogisticModel(n_features, n_classes, self.fit_intercept)

    def _code_targets(self, codes):
        if len(self.classes_) == 2:
            t = codes.astype(np.float64)  # codes 0/1 -> -1/+1 in place: one fresh array
            t *= 2.0
            t -= 1.0
            return t
        return codes

    def _groups(self):
        """Raw groups, plus the identified class-centred ones for multiclass (see Notes)."""
        out = super()._groups()
        if self.model_.softmax:
            for name in ("coef", "intercept"):
                if name in out:  # no intercept with fit_intercept=False
                    values = out[name][0]
                    out[f"{name}_centred"] = (values - values.mean(axis=2, keepdims=True), None)
        return out

    def _feature_axes(self):
        """The class-centred groups run over the features like the raw ones."""
        axes = super()._feature_axes()
        if not self.model_.softmax:
            return axes
        return {**axes, **{f"{name}_centred": axis for name, axis in axes.items()}}

    _judged_as = "identified"

    def _judge(self, posterior):
        """Multiclass: the verdict is taken on the identified quantities -- the class-centred
        coefficients and intercepts -- and on their means over the classes (the prior-only part),
        an invertible view of the draws (see Notes).  On the raw rows the slow intercept
        contrasts hide behind the class sums, which only the prior sets, so the raw rows can
        pass R-hat while the centred intercepts have not mixed."""
        model = posterior.model
        if model.n_classes <= 2:
            return assess
        noun = "identified softmax quantities (class-centred coefficients and intercepts, and " \
               "their class means)"
        return lambda draws, early=False: assess(_identified(model, draws), noun=noun,
                                                 early=early)

    def _store_summaries(self):
        mean = self._posterior_mean()
        self.coef_, self.intercept_ = mean["coef"], mean["intercept"]

    def decision_function(self, X):
        """Posterior-mean logits ``X coef_.T + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: the logit of ``classes_[1]`` (as :class:`~sklearn.linear_model.
            LogisticRegression`); multiclass: one column per class.  The sign of the binary
            score is that of the point prediction at the posterior mean, which can differ
            from :meth:`predict` (the posterior-predictive average) near the boundary.
        """
        return self._predict_on_rows("decision_function", X)

    def _decision_function(self, X):
        """In-memory :meth:`decision_function`."""
        X = self._validate_X_predict(X)
        scores = np.asarray(X @ self.coef_.T + self.intercept_)
        bad = ~np.isfinite(scores).all(axis=1)
        if bad.any():  # inf - inf inside the product (values near 1e308): the exact ray form
            lin = np.column_stack([self.coef_, self.intercept_])
            s, Z = ray_outputs(lin, X[bad], fit_intercept=True)
            with np.errstate(over="ignore"):
                scores[bad] = (s * Z).T
        return scores[:, 0] if scores.shape[1] == 1 else scores


def _identified(model, draws):
    """``(C, D, q)`` columns: class-centred coefficients and intercepts, then their class means."""
    C, D, p = draws.shape
    named = model.unpack(draws.reshape(C * D, p))
    cols = []
    for name in ("coef", "intercept"):
        if name in named:
            values = named[name]  # (S, K, d) or (S, K)
            mean = values.mean(axis=1, keepdims=True)
            cols += [(values - mean).reshape(C * D, -1), mean.reshape(C * D, -1)]
    return np.concatenate(cols, axis=1).reshape(C, D, -1)
