"""The tuned thresholds of the mode search and of the Laplace approximation at the mode.

One frozen record, :class:`ModeConfig`; the fit engine passes the one of its
:class:`~skbayes_sg.fitting.FitConfig` (``FitConfig.mode``) to
:func:`~skbayes_sg.preprocessing.find_mode` and :func:`~skbayes_sg.preprocessing.laplace_at`.
Tests construct another one instead of patching module constants.
"""

from dataclasses import dataclass

__all__ = ["DEFAULT_MODE_CONFIG", "ModeConfig"]


@dataclass(frozen=True, kw_only=True)
class ModeConfig:
    """Thresholds of the mode search and of the Laplace approximation (the library's defaults).

    Attributes
    ----------
    warm_rows : int
        Newton first runs on a uniform subsample of this many rows (likelihood scaled to ``N``)
        when the data have at least four times as many: full-data Newton then starts a few
        posterior sd from the mode, and its directions use the subsample's Hessian (about
        ``sqrt(p / m)`` off) until the one exact Hessian pass at the mode.
    first_rows, first_rows_per_param : int
        The warm subsample's own Newton starts from the mode of ``max(first_rows,
        first_rows_per_param p)`` of its rows when it has four times as many: its Hessian is
        then about ``sqrt(p / m) = 1/8`` off, so the second stage converges at about that rate,
        and the exact Hessian passes of a start far out are paid on the small set.
    warm_tol : float
        Newton decrement at which the warm subsample's mode is accepted: it is about
        ``sqrt(N / m)`` posterior sd from the full mode anyway.
    hessian_rows_per_param : int
        Above four times ``max(warm_rows, hessian_rows_per_param p)`` rows (of a posterior with
        ``cheap_subsets``), the Hessian at the mode is estimated on that many uniform rows (the
        warm start's, scaled to ``N``) instead of a full, compute-bound pass (``n p^2``
        products): it only shapes the preconditioner and the chains' starts, and its relative
        error is about ``2 / sqrt(400) = 0.1`` in the worst direction.
    sampled_tol : float
        Where the Hessian is estimated on a subsample, full-data Newton stops at a decrement
        below ``sampled_tol p``: the mode within about 0.01 posterior sd in all, far inside that
        Hessian's error (control variates are exact at whatever anchor they get); the last
        passes would only polish digits the chains cannot see.
    tol : float
        Newton's decrement tolerance elsewhere.
    rewhiten : int
        Softmax L-BFGS runs in Kronecker coordinates of its start and is re-whitened once at the
        iterate if not converged after this many iterations: where the curvature at the mode
        differs much from the start's (uncentred features) the start's coordinates stay badly
        scaled, while well-scaled problems converge before the switch.
    coupling_flops, coupling_min_rows : float, int
        The coupled-intercept Kronecker Laplace computes its coupling ``C`` (``n K^2 d``
        multiply-adds) on all the rows up to ``coupling_flops``; beyond it on a fixed uniform
        subsample of ``max(coupling_min_rows, coupling_flops / (K^2 d))`` rows, scaled to the
        data.
    """

    warm_rows: int = 65_536
    first_rows: int = 4096
    first_rows_per_param: int = 64
    warm_tol: float = 1e-6
    hessian_rows_per_param: int = 400
    sampled_tol: float = 1e-6
    tol: float = 1e-10
    rewhiten: int = 60
    coupling_flops: float = 4e10
    coupling_min_rows: int = 4096


DEFAULT_MODE_CONFIG = ModeConfig()
