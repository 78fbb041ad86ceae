"""Approximate posterior on centroids of small clusters (methods.md §10)."""

import math

import numpy as np
from sklearn.base import clone

from ..preprocessing import compress, mode_shift
from ._base import BaseStrategy, Problem
from ._stratified import clustering_view

__all__ = ["Compressed"]

_SHIFT_WARN = 0.3  # posterior sds: above it, fit emits an ApproximationWarning


class Compressed(BaseStrategy):
    """Replace clusters of radius ``<= delta`` by their centroids (seed 003).

    Parameters
    ----------
    radius : float or None, default=None
        Cluster radius ``delta`` in normalised units (the data divided by
        ``R = max_i ||x_i||``, seed 003 §4, so ``delta`` is relative to the
        largest feature vector).  ``0`` keeps every distinct row (exact
        posterior).  ``None`` sets the number of centroids from
        ``target_ratio`` instead.
    target_ratio : float, default=0.1
        Used when ``radius=None``: ``c = ceil(target_ratio * n_samples)``
        centroids (at least one per class), obtained by splitting the widest
        clusters, so the radius is as small as this budget allows.
    n_refine : int, default=1
        Lloyd steps after each 2-means split of the clustering
        (:func:`~skbayes_sg.preprocessing.compress`).
    inner : str or strategy object, default="full"
        How the compressed data are used: ``"full"`` gives the exact gradient
        of the compressed potential (so ``sampler="hmc"`` works, at ``O(c)``
        per gradient, as seed 003 runs it); any other strategy name
        (``"uniform"``, ``"control_variates"``, ``"stratified"``, ...) or
        object subsamples the centroids (weights ``n_j``).

    Notes
    -----
    The vectors clustered are, for classifiers, the features within each
    class and, for regression, ``(x_i, y_i)`` jointly; both divided by ``R``.
    Each cluster ``S_j`` (``n_j`` rows) becomes its centroid ``mu_j`` with
    multiplicity ``n_j`` and the sampler targets::

        U~(theta) = f_0(theta) + sum_j n_j f(mu_j; theta)

    with ``KL(pi || pi~) <= K0 delta^2`` (Theorem 1).  Fitted attributes:
    ``compression_ratio_ = c / N`` (eq. 3), ``n_centroids_`` and
    ``compression_radius_`` (largest cluster radius, normalised units) and
    ``compression_shift_``, how far the compressed posterior's mode lies
    from the full-data mode in full-posterior sds (one Newton step on ``U~``
    from ``theta_hat``, :func:`~skbayes_sg.preprocessing.mode_shift`: exact
    for linear regression with fixed noise, a first-order estimate
    otherwise; a pass over the centroids); ``fit`` emits an
    :class:`~skbayes_sg.utils.ApproximationWarning` when it exceeds 0.3.
    ``preprocessing_`` gains ``compression_seconds`` and ``compression_rounds``.
    The mode and Laplace covariance (start points, preconditioner) are those
    of the uncompressed data.  For regression the
    spread of ``y`` inside a cluster is lost, so an inferred ``noise_std`` is
    biased low unless ``delta`` is small.

    References
    ----------
    Song, Q. (2022). Approximate inference via clustering. Preprint.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skbayes_sg import BayesianLinearRegression
    >>> from skbayes_sg.subsampling import Compressed
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X, y = StandardScaler().fit_transform(X), (y - y.mean()) / y.std()
    >>> reg = BayesianLinearRegression(sampler="hmc", subsampling=Compressed(radius=0.2),
    ...                                n_draws=200, random_state=0).fit(X, y)
    >>> reg.n_centroids_, round(reg.compression_ratio_, 3)
    (229, 0.518)
    >>> round(reg.compression_shift_, 1)  # in posterior sds: this fit warned
    5.0
    """

    name = "compressed"

    def __init__(self, radius=None, target_ratio=0.1, n_refine=1, inner="full"):
        self.radius = radius
        self.target_ratio = target_ratio
        self.n_refine = n_refine
        self.inner = inner

    def _inner_strategy(self):
        from . import SUBSAMPLING

        inner = self.inner
        if isinstance(inner, str):
            if inner not in SUBSAMPLING or inner == self.name:
                valid = sorted(k for k in SUBSAMPLING if k != self.name)
                raise ValueError(f"Compressed: inner must be one of {valid} or a strategy "
                                 f"object, got {inner!r}.")
            return SUBSAMPLING[inner]()
        if not isinstance(inner, BaseStrategy) or isinstance(inner, Compressed):
            raise ValueError(f"Compressed: inner must be a strategy name or object, got {inner!r}.")
        return clone(inner, safe=False)

    @property
    def exact(self):
        """Exact (the compressed potential's gradient) when ``inner`` is."""
        return bool(self._inner_strategy().exact)

    def check_sampler(self, sampler):
        self._inner_strategy().check_sampler(sampler)

    def _validate(self):
        if self.radius is not None and not (np.isfinite(self.radius) and self.radius >= 0):
            raise ValueError(f"Compressed: radius must be None or >= 0, got {self.radius!r}.")
        if not 0 < self.target_ratio <= 1:
            raise ValueError(f"Compressed: target_ratio must be in (0, 1], "
                             f"got {self.target_ratio!r}.")
        if not isinstance(self.n_refine, (int, np.integer)) or self.n_refine < 0:
            raise ValueError(f"Compressed: n_refine must be an int >= 0, got {self.n_refine!r}.")

    def build(self, problem, *, batch_size, rng):
        self._validate()
        inner = self._inner_strategy()
        view, groups = clustering_view(problem, joint=True)
        R = float(np.sqrt(np.max(np.einsum("nd,nd->n", problem.X, problem.X, dtype=float))))
        R = R if R > 0 else 1.0
        n_clusters = None if self.radius is not None else max(
            1, math.ceil(self.target_ratio * problem.n_rows))
        comp = compress(view, groups=groups, weight=problem.weight, n_refine=int(self.n_refine),
                        radius=None if self.radius is None else self.radius * R,
                        n_clusters=n_clusters)
        small = _compressed_problem(problem, comp, groups is not None)
        est = inner.build(small, batch_size=min(batch_size, small.n_rows), rng=rng)
        c = small.n_rows
        est.info.update({"compression_seconds": comp.seconds, "compression_rounds": comp.n_rounds})
        shift, n_evals = mode_shift(small)
        est.preprocessing_evals += n_evals
        est.attributes.update({"compression_ratio": c / problem.n_data, "n_centroids": c,
                               "compression_radius": float(comp.radii.max() / R),
                               "compression_shift": shift})
        if shift > _SHIFT_WARN:
            est.warnings.append(
                f"subsampling='compressed' samples an approximate posterior whose mode is about "
                f"{shift:.2g} posterior sds from the full-data mode (compression_shift_: one "
                f"Newton step; compression_ratio_={c / problem.n_data:.3g}). For a closer "
                "approximation use a smaller radius or a larger target_ratio.")
        return est


def _compressed_problem(problem, comp, classifier):
    """The Problem on centroids with multiplicities (mode/covariance kept)."""
    d = problem.X.shape[1]
    Xc = comp.centroids[:, :d].astype(problem.X.dtype, copy=False)
    if classifier:
        yc = comp.groups.astype(problem.y.dtype, copy=False)
    else:
        yc = comp.centroids[:, d].astype(problem.y.dtype, copy=False)
    return Problem(problem.model, problem.prior, np.ascontiguousarray(Xc), yc, comp.counts,
                   problem.mode, problem.covariance)
