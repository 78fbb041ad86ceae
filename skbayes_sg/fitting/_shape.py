"""How Gaussian the posterior is at its mode: the potential along the whitened axes.

Along each whitened axis ``v_j = L e_j`` of the Laplace approximation (``M = L L^T``), the
potential of a Gaussian posterior rises by ``c^2 / 2`` at ``mode +- c v_j``.  A posterior with an
exponential tail (a logistic intercept fitted on a handful of positive rows) rises by far less
on one side and more on the other.  :func:`gaussian_misfit` measures the worst
``|log(dU / (c^2 / 2))|`` over the ``2 p`` points: one batched pass over the rows.
"""

from typing import NamedTuple

import numpy as np

from ..samplers import from_laplace

__all__ = ["Misfit", "gaussian_misfit"]


class Misfit(NamedTuple):
    """``misfit``: the worst ``|log(dU / (c^2 / 2))|`` (inf where ``U`` fell or is not
    finite), ``axis``: its whitened axis, ``ratios``: ``(2, p)`` the ``dU / (c^2 / 2)`` at
    ``-c`` and ``+c``; ``grad_evals``: per-example evaluations (``(2 p + 1) n_rows``)."""

    misfit: float
    axis: int
    ratios: np.ndarray
    grad_evals: int


def gaussian_misfit(posterior, laplace, c=2.5):
    """:class:`Misfit` of ``posterior`` to its ``laplace`` approximation at ``c`` sd."""
    p = laplace.mode.shape[0]
    steps = from_laplace(laplace).from_u(c * np.eye(p))
    points = np.concatenate([laplace.mode[None], laplace.mode - steps, laplace.mode + steps])
    u = posterior.potential(points)
    ratios = ((u[1:] - u[0]) / (0.5 * c * c)).reshape(2, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.abs(np.log(ratios))
    logs = np.where(np.isfinite(logs), logs, np.inf)
    worst = int(np.argmax(logs.max(0)))
    return Misfit(float(logs.max()), worst, ratios, int(points.shape[0] * posterior.n_rows))
