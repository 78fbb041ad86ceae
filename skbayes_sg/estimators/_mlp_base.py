"""What the MLP classifier and regressor share: the network's parameters, summaries and verdict."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..diagnostics import MIN_DRAWS, POOLED_TOLERANCE, assess, pooled_error

__all__ = ["_MLPMixin", "judged_rows", "off_data_rows"]

_JUDGED_ROWS = 100  # training rows whose predictive values judge convergence
_OFF_DATA_FACTOR = 1.5  # the off-data rows: the judged rows this many times as far from their mean


def judged_rows(n_rows, n_judged=_JUDGED_ROWS):
    """A fixed, evenly spaced subset of ``n_rows`` training rows (at most ``n_judged``)."""
    return np.unique(np.linspace(0, n_rows - 1, min(n_rows, n_judged)).round().astype(np.intp))


def off_data_rows(X, factor=_OFF_DATA_FACTOR):
    """The rows ``X`` moved ``factor`` times as far from their mean: inputs a little beyond the
    training data, where a network's predictive uncertainty is its least constrained."""
    X = np.asarray(X, dtype=float)
    center = X.mean(axis=0)
    return center + factor * (X - center)


class _MLPMixin:
    """The network's parameters (``hidden_layer_sizes``, ``activation``), ``coefs_`` /
    ``intercepts_`` and the verdict on the pooled predictive.

    A subclass gives ``_judged_noun`` and ``_judge_parts(model, draws (S, p), X, y) -> (judged,
    mean, scale, log_noise)`` from one forward pass: ``judged (S, rows)`` the identified
    functions of a training row whose R-hat and ESS ``diagnostics_`` reports, and what the
    pooled predictive averages (class probabilities ``(S, rows, K)`` with None, None; or
    Gaussian means ``(S, rows)``, the predictive sd per row and the draws' log noise sd).
    """

    _mlp_constraints = {
        "hidden_layer_sizes": [tuple, list, Integral],
        "activation": [StrOptions({"relu", "tanh", "logistic"})],
        "prior_scaling": [StrOptions({"fan_in", "none"})],
        # no exact Hessian, so no dense Laplace preconditioner: "auto" is "diagonal" (Fisher)
        "preconditioner": [StrOptions({"auto", "diagonal"}), None],
        "n_predict_draws": [Interval(Integral, 1, None, closed="left")],
    }
    _init_dispersion = 0.1
    _sparse = False
    _auto_subsampling, _cheap_subsampling = "uniform", None  # subsampling="auto": its default
    _judged_as = "predictive"

    def _prior_precision(self, model, y):
        """The network's prior precision: ``prior_scaling="fan_in"`` divides layer ``l``'s weight
        variance by its fan-in."""
        return model.prior_precision(self.prior_scale, self._intercept_scale(y),
                                     fan_in=self.prior_scaling == "fan_in")

    def _judge(self, posterior):
        """The verdict on the pooled predictive, on a fixed subset of up to 100 training rows
        and on the same rows moved off the data (:func:`off_data_rows`).

        Raw weights are not identified (hidden units permute, signs flip) and the chains start
        in different modes, which local samplers do not leave: their predictions need not agree.
        What ``predict`` averages is the pooled predictive, so its Monte-Carlo error decides
        (:func:`~skbayes_sg.diagnostics.pooled_error`, at most
        :data:`~skbayes_sg.diagnostics.POOLED_TOLERANCE` in mean total variation), on the
        training rows and off the data, where local chains explore least and disagree most.
        The R-hat and ESS of the rows' judged values (``_judge_parts``) are kept in
        ``diagnostics_`` as ``predictive_rhat`` / ``predictive_ess`` (the raw-weight ``rhat`` /
        ``ess`` too).
        """
        rows = judged_rows(posterior.n_rows)
        X, y = posterior.rows(rows)
        X_off, model, noun = off_data_rows(X), posterior.model, self._judged_noun

        def judge(draws, early=False):
            C, D, p = draws.shape
            flat = draws.reshape(C * D, p)
            judged, *parts = self._judge_parts(model, flat, X, y)
            verdict = assess(judged.reshape(C, D, rows.size), noun=noun)
            if D < MIN_DRAWS:
                return verdict
            pooled = _pooled(parts, C, D)
            off = _pooled(self._judge_parts(model, flat, X_off, y)[1:], C, D)
            problems = ((_pooled_problem(pooled, C),) if pooled.error > pooled.tolerance else ()) \
                + ((_off_data_problem(off, C),) if off.error > off.tolerance else ())
            return verdict._replace(problems=problems, pooled=pooled, off_data=off)

        return judge

    def _warning(self, verdict, info):
        """The three lines of the warning of a failing pooled verdict (too few draws to judge:
        the common warning)."""
        if verdict.pooled is None:
            return super()._warning(verdict, info)
        return _pooled_warning(verdict.pooled, verdict.off_data, info, self.draws_.shape[0],
                               self.max_doublings)

    def _hidden(self):
        sizes = self.hidden_layer_sizes
        sizes = (sizes,) if isinstance(sizes, Integral) else tuple(sizes)
        if any(isinstance(s, bool) or not isinstance(s, Integral) or s < 1 for s in sizes):
            raise ValueError(f"hidden_layer_sizes must be positive integers, got {sizes!r}.")
        return tuple(int(s) for s in sizes)

    def _store_summaries(self):
        mean = self._posterior_mean()
        n_layers = len(self._hidden()) + 1
        self.coefs_ = [mean[f"coef_{i}"] for i in range(n_layers)]
        self.intercepts_ = [mean[f"intercept_{i}"] for i in range(n_layers)]


def _pooled(parts, C, D):
    """:func:`~skbayes_sg.diagnostics.pooled_error` of ``_judge_parts``' ``(mean, scale,
    log_noise)`` over ``C`` chains of ``D`` draws."""
    mean, scale, log_noise = parts
    return pooled_error(mean.reshape(C, D, *mean.shape[1:]), scale=scale,
                        log_noise=None if log_noise is None else log_noise.reshape(C, D),
                        tolerance=POOLED_TOLERANCE)


def _pooled_problem(pooled, n_chains):
    """The verdict's sentence (``diagnostics_["convergence_problems"]``, ``summary()``)."""
    return (f"The pooled predictive's Monte-Carlo error is {pooled.error:.3g} in mean total "
            f"variation over the judged training rows, above {pooled.tolerance}; "
            f"{100 * pooled.modes_share:.0f}% of its variance is the spread between the "
            f"{n_chains} chains' modes, which only more chains reduce.")


def _off_data_problem(off, n_chains):
    """The off-data verdict's sentence."""
    return (f"Off the data (the judged rows moved {_OFF_DATA_FACTOR:g} times as far from their "
            f"mean) the pooled predictive's Monte-Carlo error is {off.error:.3g}, above "
            f"{off.tolerance}; {100 * off.modes_share:.0f}% of its variance is the spread "
            f"between the {n_chains} chains' modes: its uncertainty there is not reliable.")


def _todo(pooled, info, n_chains, max_doublings):
    """What reduces ``pooled``'s error: more chains for a modes' spread, else longer runs."""
    if pooled.modes_share >= 0.5 or not np.isfinite(pooled.doublings):
        need = int(np.ceil(n_chains * (pooled.error / pooled.tolerance) ** 2))
        return f"increase n_chains to about {need}"
    return f"increase max_doublings (ran {info['n_doublings']} of {max_doublings}) or thin"


def _pooled_warning(pooled, off, info, n_chains, max_doublings):
    """Three lines: the failing errors and the run, why, and what to do (for the part that
    needs the most doublings, and an exact sampler when the error off the data fails)."""
    where = {"on the data": pooled, "off it": off}
    failing = {k: e for k, e in where.items() if e is not None and e.error > e.tolerance}
    off_fails = "off it" in failing
    if off_fails and len(failing) == 1:
        failing = {"off the data": off}
    head = ("Pooled predictive Monte-Carlo error "
            + ", ".join(f"{e.error:.3g} {k}" for k, e in failing.items())
            + f" > {pooled.tolerance} after {info['sampling_steps']:,} steps.")
    why = ("Chains in different modes are expected; their spread is "
           + ", ".join(f"{e.modes_share:.0%}" for e in failing.values()) + " of the error"
           + ("; a longer run diverged." if info.get("extension_diverged") else "."))
    if not all(np.isfinite(e.error) for e in failing.values()):
        todo = "Predictions are not finite: see diagnostics_ and summary()."
    else:
        todo = _todo(max(failing.values(), key=lambda e: e.doublings), info, n_chains,
                     max_doublings)
        todo = todo[0].upper() + todo[1:] + (
            "; off the data, try sampler='hmc', subsampling='full'." if off_fails else ".")
    return "\n".join([head, why, todo])
