"""``diagnostics_`` from the fit engine's :class:`~skbayes_sg.fitting.FitResult`, and the
convergence warning."""

import numpy as np

from ..diagnostics import assess
from ..utils import ApproximationWarning, ConvergenceWarning, warn_user
from ._messages import (audit_message, convergence_message, noise_advice, run_longer_advice,
                        tail_message)

__all__ = ["NOISY_STEP"]

NOISY_STEP = 1e-2  # whitened auto step below which noise dominates


class _DiagnosticsMixin:
    """``_set_diagnostics(result)``: the estimators' ``diagnostics_`` and their warning."""

    def _set_diagnostics(self, result):
        plan, verdict, info = result.plan, result.verdict, result.info
        pre_evals, evals = plan.n_grad_evals, result.n_grad_evals
        n_data, steps = plan.estimator.n_data, result.step_sizes
        raw = verdict if verdict.rhat.shape == self.draws_.shape[-1:] else assess(self.draws_)
        n_steps = self.n_warmup + info["sampling_steps"]
        d = {
            "ess": raw.ess_bulk, "ess_tail": raw.ess_tail, "rhat": raw.rhat,
            "converged": verdict.converged,
            "convergence_problems": verdict.problems,
            "sampler": plan.sampler.name,
            "subsampling": plan.info["subsampling"],
            "friction": getattr(plan.sampler, "friction", None),
            "integrator": getattr(plan.sampler, "integrator", None),
            "step_size": float(np.mean(steps)),
            "step_size_per_chain": steps,
            "auto_step_size": plan.tuning.auto_step_size,
            "variance_error": plan.tuning.variance_error,
            "n_grad_evals": int(evals + pre_evals),
            "sampling_grad_evals": int(evals),
            "preprocessing_grad_evals": int(pre_evals),
            "data_passes": float((evals + pre_evals) / max(n_data, 1)),
            "grad_evals_per_step": float(evals / max(self.draws_.shape[0] * n_steps, 1)),
            "preprocessing_seconds": result.preprocessing_seconds,
            "sampling_seconds": float(result.phases["sampling"][0]),
            "phases": {name: {"seconds": float(sec), "grad_evals": int(ev),
                              "data_passes": float(ev / max(n_data, 1))}
                       for name, (sec, ev) in result.phases.items()},
            "gradient_noise": plan.info["gradient_noise"],
            "gradient_noise_left": plan.info["gradient_noise_left"],
            "batch_size": plan.info["batch_size"],
            "curvature": plan.info["curvature"],
            "curvature_min": plan.info["curvature_min"],
            "audit": None if result.audit is None else result.audit.as_dict(),
            "tail_check": None if result.tail is None else result.tail.as_dict(),
            **info,
        }
        if raw is not verdict:  # judged on functions of the parameters (see _judge)
            key = self._judged_as
            d.update({f"{key}_rhat": verdict.rhat, f"{key}_ess": verdict.ess_bulk,
                      f"{key}_ess_tail": verdict.ess_tail})
        if verdict.pooled is not None:
            d.update({"pooled_error": verdict.pooled.error,
                      "pooled_error_modes_share": verdict.pooled.modes_share,
                      "pooled_error_tolerance": verdict.pooled.tolerance})
        if verdict.off_data is not None:
            d.update({"off_data_error": verdict.off_data.error,
                      "off_data_modes_share": verdict.off_data.modes_share})
        self.diagnostics_ = d
        if result.audit is not None and not result.audit.passed:
            warn_user(audit_message(result.audit), ApproximationWarning)
        if result.tail is not None and not result.tail.passed:
            warn_user(tail_message(result.tail), ApproximationWarning)
        if verdict.problems:
            warn_user(self._warning(verdict, info), ConvergenceWarning)

    def _warning(self, verdict, info):
        """The three lines of the ``ConvergenceWarning`` of a failing ``verdict``."""
        judged_as = None if verdict.rhat.shape == self.draws_.shape[-1:] else self._judged_as
        return convergence_message(verdict, info, self._advice(verdict), judged_as=judged_as,
                                   n_chains=self.draws_.shape[0],
                                   max_doublings=self.max_doublings)

    def _advice(self, verdict):
        """The convergence warning's last line: what to do."""
        return self._noise_advice() or run_longer_advice(verdict, *self.draws_.shape[:2])

    def _noise_advice(self):
        """Less minibatch noise, when it forced a tiny automatic step (else None)."""
        d = self.diagnostics_
        if self.step_size == "auto" and d["step_size"] < NOISY_STEP and d["gradient_noise"]:
            return noise_advice(d["step_size"], self.subsampling)
        return None
