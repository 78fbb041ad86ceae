"""Plain progress lines for ``verbose``: phase, chains, steps, rate and ETA.

``verbose=0`` is silent: :func:`make_progress` returns None and the sampling loop pays nothing.
``verbose=1`` prints one line after the preprocessing (the sampler, the gradient and the step that
run), per phase (warm-up, sampling) and chain group at most ten lines (one per 10% of the steps,
and at most one per block of up to 256 steps: a 1,000-step phase prints four), and one line at
the end of ``fit`` with the R-hat and ESS its verdict judged.  ``verbose>=2`` prints a line after
every block of steps and more detail on the preprocessing.  The callback runs once per block,
never per step.
"""

import sys

import numpy as np

__all__ = ["Progress", "describe_run", "make_progress"]

_PREFIX = "[skbayes_sg]"


def format_seconds(seconds):
    """``0.42 -> "0.4s"``, ``75 -> "1m15s"``, ``4000 -> "1h06m"``."""
    if seconds != seconds or seconds == float("inf"):
        return "?"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, sec = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{sec:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def chain_label(chains):
    """``[0, 1, 2, 3] -> "chains 0-3"``, ``[2] -> "chain 2"``, ``[0, 2] -> "chains 0,2"``."""
    if chains is None:
        return "chains"
    ids = [int(c) for c in chains]
    if len(ids) == 1:
        return f"chain {ids[0]}"
    if ids == list(range(ids[0], ids[0] + len(ids))):
        return f"chains {ids[0]}-{ids[-1]}"
    return "chains " + ",".join(map(str, ids))


class Progress:
    """Callable ``progress(phase, done, total, seconds, chains=None)``.

    Picklable (the stream is looked up at call time unless given), so chain
    groups running in joblib workers report too.

    Parameters
    ----------
    verbose : int
        1: at most ten lines per phase; 2 or more: a line per block.
    stream : file-like, optional
        Where to write; default ``sys.stdout`` at the time of the call.
    """

    def __init__(self, verbose, stream=None):
        self.verbose = int(verbose)
        self.stream = stream
        self._last = {}

    def write(self, text):
        """Print one line with the package prefix."""
        print(f"{_PREFIX} {text}", file=self.stream or sys.stdout, flush=True)

    def __call__(self, phase, done, total, seconds, chains=None):
        key = (phase, None if chains is None else tuple(int(c) for c in chains))
        tenth = (10 * done) // max(total, 1)
        previous = self._last.get(key)
        if previous is not None and done <= previous[0]:
            previous = None  # a restarted run (e.g. after a step-size retry)
        if self.verbose < 2 and previous is not None and previous[1] == tenth and done < total:
            return
        self._last[key] = (done, tenth)
        rate = done / max(seconds, 1e-9)
        eta = (total - done) / rate if rate > 0 else float("nan")
        pct = 100 * done // max(total, 1)
        self.write(f"{chain_label(chains)} | {phase:<8} {pct:3d}% "
                   f"{done:>{len(str(total))}}/{total} steps | {rate:,.0f} steps/s"
                   f" | elapsed {format_seconds(seconds)} | ETA {format_seconds(eta)}")

    def preprocessed(self, plan, seconds, n_chains):
        """One line after the preprocessing: the sampler, the gradient and the step that run
        (more with ``verbose>=2``).

        Parameters
        ----------
        plan : Plan
            The engine's plan (:class:`skbayes_sg.fitting.Plan`): ``info``, ``sampler``,
            ``estimator`` and ``tuning``.
        seconds : float
        n_chains : int
        """
        info = plan.info
        chains = f"{n_chains} chain" + ("s" if n_chains != 1 else "")
        self.write(f"preprocessing done in {format_seconds(seconds)} "
                   f"({info['preprocessing_grad_evals']:,} gradient evaluations); running "
                   f"{chains} of {describe_run(plan)}")
        if self.verbose >= 2:
            extra = {k: v for k, v in info.items() if k != "preprocessing_grad_evals"}
            self.write("preprocessing details: " + ", ".join(
                f"{k}={_short(v)}" for k, v in extra.items()))

    def finished(self, diagnostics):
        """One line at the end of ``fit``: cost, the step, and the verdict's worst R-hat / ESS.

        The R-hat and ESS are those of the judged quantities: ``diagnostics["predictive_rhat"]``
        for the networks (whose verdict is the pooled predictive's Monte-Carlo error, shown
        first), ``"identified_rhat"`` for a softmax, else the parameters' ``"rhat"``.
        """
        d = diagnostics
        prefix = _judged_prefix(d)
        rhat, ess = d[f"{prefix}rhat"], d[f"{prefix}ess"]
        label = prefix.replace("_", " ")
        verdict = "converged" if d["converged"] else "not converged"
        judged = (f"pooled predictive Monte-Carlo error {d['pooled_error']:.3g} (tolerance "
                  f"{d['pooled_error_tolerance']}), " if "pooled_error" in d else "")
        self.write(f"done: sampling {format_seconds(d['sampling_seconds'])}, "
                   f"{d['n_grad_evals']:,} gradient evaluations ({d['data_passes']:.1f} data "
                   f"passes), step {d['step_size']:.3g}; {judged}{label}R-hat max "
                   f"{_nanmax(rhat):.3f}, {label}bulk ESS min {_nanmin(ess):.0f}: {verdict}; "
                   "see summary()")


def describe_run(plan):
    """``"hmc on the full gradient, step adapted from 0.9"``, ``"sghmc on preferential_cv
    minibatches of 100, step 0.28"``: what samples, on which gradient, with which step."""
    sampler, tuning, name = plan.sampler, plan.tuning, plan.info["subsampling"]
    if plan.estimator.exact:
        gradient = "the full gradient" if name == "full" else f"the exact {name} gradient"
    else:
        gradient = f"{name} minibatches of {tuning.batch_size}"
    step = ("step adapted from " if sampler.adapts_step_size else "step ") + \
        f"{tuning.step_size:.3g}"
    return f"{sampler.name} on {gradient}, {step}"


def _judged_prefix(diagnostics):
    """``"predictive_"`` / ``"identified_"`` where the verdict judged functions of the
    parameters (``diagnostics_`` then holds ``f"{prefix}rhat"``), else ``""``."""
    for key in diagnostics:
        if key.endswith("_rhat"):
            return key[:-len("rhat")]
    return ""


def _nanmax(a):
    return float(np.nanmax(a)) if np.isfinite(a).any() else float("nan")


def _nanmin(a):
    return float(np.nanmin(a)) if np.isfinite(a).any() else float("nan")


def _short(value):
    if isinstance(value, str):
        return value
    try:
        return f"{float(value):.3g}"
    except (TypeError, ValueError):
        return type(value).__name__


def make_progress(verbose, stream=None):
    """A :class:`Progress` callback, or None when ``verbose`` is falsy."""
    if not verbose:
        return None
    return Progress(verbose, stream)
