"""What the MLP classifier and regressor share: the network's parameters, summaries and verdict."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..diagnostics import assess, convergence_problems

__all__ = ["_MLPMixin", "judged_rows"]

_JUDGED_ROWS = 100  # training rows whose predictive values judge convergence


def judged_rows(n_rows, n_judged=_JUDGED_ROWS):
    """A fixed, evenly spaced subset of ``n_rows`` training rows (at most ``n_judged``)."""
    return np.unique(np.linspace(0, n_rows - 1, min(n_rows, n_judged)).round().astype(np.intp))


class _MLPMixin:
    """The network's parameters (``hidden_layer_sizes``, ``activation``), ``coefs_`` /
    ``intercepts_`` and the verdict in function space.

    A subclass gives ``_judged_noun`` and ``_judge_parts()``: ``(values, explain)``, where
    ``values(model, draws (S, p), X, y) -> (S, rows)`` are the identified functions of a
    training row that judge convergence and ``explain(values (C, D, rows), rhat) -> (hint,
    note)`` says what a failing verdict means for the predictions.
    """

    _mlp_constraints = {
        "hidden_layer_sizes": [tuple, list, Integral],
        "activation": [StrOptions({"relu", "tanh", "logistic"})],
        # no exact Hessian, so no dense Laplace preconditioner: "auto" is "diagonal" (Fisher)
        "preconditioner": [StrOptions({"auto", "diagonal"}), None],
        "n_predict_draws": [Interval(Integral, 1, None, closed="left")],
    }
    _init_dispersion = 0.1
    _sparse = False
    _auto_subsampling, _cheap_subsampling = "uniform", None  # subsampling="auto": its default
    _judged_as = "predictive"

    def _advice(self, verdict):
        """The convergence warning's last line.

        With the default ``sgnht`` the thermostat absorbs the minibatch noise, so the noise
        advice of the other samplers does not apply; for a network more draws mostly cost
        memory, so the advice is a longer run at the same memory (``thin``, ``max_doublings``),
        after how far apart the chains' predictions are (``verdict.note``).
        """
        noise = None if self.sampler == "sgnht" else self._noise_advice()
        note = verdict.note or "The chains disagree"
        return noise or f"{note}: increase thin and max_doublings."

    def _judge(self, posterior):
        """The verdict in function space, on a fixed subset of up to 100 training rows.

        Raw weights are not identified (hidden units permute, signs flip), so their R-hat says
        nothing about the predictions; functions of the training rows (``_judge_parts``) are
        identified and decide the warning (``diagnostics_`` keeps the raw-weight ``rhat`` /
        ``ess`` too).  A failing verdict also says how far apart the chains' predictions are.
        """
        rows = judged_rows(posterior.n_rows)
        X, y = posterior.rows(rows)
        model, noun = posterior.model, self._judged_noun
        values, explain = self._judge_parts()

        def judge(draws, early=False):
            C, D, p = draws.shape
            judged = values(model, draws.reshape(C * D, p), X, y).reshape(C, D, rows.size)
            verdict = assess(judged, noun=noun, early=early)
            if verdict.converged or C < 2 or np.all(np.isnan(verdict.rhat)):
                return verdict
            hint, note = explain(judged, verdict.rhat)
            problems = convergence_problems(verdict.rhat, verdict.ess_bulk, verdict.ess_tail, C,
                                            hint=hint, noun=noun)
            return verdict._replace(problems=problems, note=note)

        return judge

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
