"""Approximate posterior on centroids of small clusters (methods.md §10)."""

import math
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils._param_validation import Interval, StrOptions

from ..models import Posterior
from ..preprocessing import compress, mode_shift
from ._base import BaseStrategy
from ._stratified import clustering_view

__all__ = ["Compressed"]

_SHIFT_WARN = 0.3  # posterior sds: above it, fit emits an ApproximationWarning


class Compressed(BaseStrategy):
    """Replace clusters of radius ``<= delta`` by their centroids (seed 003).

    Parameters
    ----------
    radius : float or None, default=None
        Cluster radius ``delta`` in normalised units (the data divided by ``R = max_i ||x_i||``,
        seed 003 §4, so ``delta`` is relative to the largest feature vector).  ``0`` keeps every
        distinct row (exact posterior).  ``None`` sets the number of centroids from
        ``target_ratio`` instead.
    target_ratio : float, default=0.1
        Used when ``radius=None``: ``c = ceil(target_ratio * n_samples)``
        centroids (at least one per class), obtained by splitting the widest
        clusters, so the radius is as small as this budget allows.
    n_refine : int, default=1
        Lloyd steps after each 2-means split of ``clustering="bisect"``.
    clustering : {"bisect", "sequential"}, default="bisect"
        How the clusters of radius ``<= delta`` are found
        (:func:`~skbayes_sg.preprocessing.compress`): ``"bisect"`` splits clusters in two
        (2-means) until all are within ``delta``; ``"sequential"`` is seed 003's own
        Algorithm 1, one pass over the rows in a random order (the fit's ``random_state``), each
        row joining the cluster of its nearest earlier row within ``2 delta`` unless the
        cluster's radius would exceed ``delta``.  ``"sequential"`` needs ``radius``.
    inner : str or strategy object, default="full"
        How the compressed data are used: ``"full"`` gives the exact gradient of the compressed
        potential (so ``sampler="hmc"`` works, at ``O(c)`` per gradient, as seed 003 runs it); any
        other strategy name (``"uniform"``, ``"control_variates"``, ``"stratified"``, ...) or
        object subsamples the centroids (weights ``n_j``).

    Notes
    -----
    The vectors clustered are, for classifiers, the features within each class and, for regression,
    ``(x_i, y_i)`` jointly; both divided by ``R``.  Each cluster ``S_j`` (``n_j`` rows) becomes its
    centroid ``mu_j`` with multiplicity ``n_j`` (a weighted design for the inner strategy) and the
    sampler targets::

        U~(theta) = f_0(theta) + sum_j n_j f(mu_j; theta)

    with ``KL(pi || pi~) <= K0 delta^2`` (Theorem 1).  ``preprocessing_``
    gets ``compression_ratio = c / N`` (eq. 3), ``n_centroids``,
    ``compression_radius`` (largest cluster radius, normalised units),
    ``compression_seconds``, ``compression_rounds`` and
    ``compression_shift``, how far the compressed posterior's mode lies from
    the full-data mode in full-posterior sds (one Newton step on ``U~`` from
    ``theta_hat``, :func:`~skbayes_sg.preprocessing.mode_shift`: exact for
    linear regression with fixed noise, a first-order estimate otherwise; a
    pass over the centroids); ``fit`` emits an
    :class:`~skbayes_sg.utils.ApproximationWarning` when it exceeds 0.3.
    The mode and Laplace covariance (start points, preconditioner) are those of the uncompressed
    data.  For regression the spread of ``y`` inside a cluster is lost, so an inferred
    ``noise_std`` is biased low unless ``delta`` is small.

    ``clustering="sequential"`` follows Algorithm 1 with three choices the paper leaves open:
    ``Find-Nearest-Neighbor(z_i, T, 2 delta)`` is an exact k-d tree query for the nearest earlier
    row (the paper uses E2LSH, an approximate oracle that may miss a neighbour); the rows are
    visited in a random order rather than the file's; and the radius of ``S_j + {z_i}`` is
    measured about its *new* centroid ``mu_j' = mu_j + w_i (z_i - mu_j) / (W_j + w_i)``,
    exactly (a triangle-inequality bound ``max(||z_i - mu_j'||, delta_j + ||mu_j' - mu_j||)``
    skips the check over the members when it is already ``<= delta``), so every cluster radius
    is ``<= delta`` as Theorem 1 assumes.  The visiting order comes from the fit's
    ``random_state``, so seeds give different clusterings (the paper averages 5 trials).

    References
    ----------
    Song, Q. (2022). Approximate inference via clustering. Preprint.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_diabetes(return_X_y=True)
    >>> X, y = StandardScaler().fit_transform(X), (y - y.mean()) / y.std()
    >>> from skbayes_sg import BayesianLinearRegression
    >>> from skbayes_sg.subsampling import Compressed
    >>> reg = BayesianLinearRegression(sampler="hmc", subsampling=Compressed(radius=0.2),
    ...                                n_draws=200, random_state=0).fit(X, y)
    >>> pre = reg.preprocessing_
    >>> pre["n_centroids"], round(pre["compression_ratio"], 3)
    (229, 0.518)
    >>> round(pre["compression_shift"], 1)  # in posterior sds: this fit warned
    5.0
    >>> seq = Compressed(radius=0.2, clustering="sequential")  # seed 003's Algorithm 1
    >>> pre = BayesianLinearRegression(sampler="hmc", subsampling=seq, n_draws=200,
    ...                                random_state=0).fit(X, y).preprocessing_
    >>> pre["n_centroids"], round(pre["compression_radius"], 3)
    (235, 0.2)
    """

    name = "compressed"
    supports_sparse = False
    needs_rows = frozenset({"whole"})  # k-means on the rows

    def __init__(self, radius=None, target_ratio=0.1, n_refine=1, clustering="bisect",
                 inner="full"):
        self.radius = radius
        self.target_ratio = target_ratio
        self.n_refine = n_refine
        self.clustering = clustering
        self.inner = inner

    def _inner_strategy(self):
        from . import SUBSAMPLING

        inner = self.inner
        if isinstance(inner, str) and inner in SUBSAMPLING and inner != self.name:
            return SUBSAMPLING[inner]()
        if isinstance(inner, BaseStrategy) and not isinstance(inner, Compressed):
            return clone(inner, safe=False)
        valid = sorted(k for k in SUBSAMPLING if k != self.name)
        raise ValueError(f"Compressed: inner must be one of {valid} or a strategy object "
                         f"other than Compressed, got {inner!r}.")

    @property
    def exact(self):
        """Exact (the compressed potential's gradient) when ``inner`` is."""
        return bool(self._inner_strategy().exact)

    _parameter_constraints = {
        "radius": [Interval(Real, 0, np.inf, closed="left"), None],
        "target_ratio": [Interval(Real, 0, 1, closed="right")],
        "n_refine": [Interval(Integral, 0, None, closed="left")],
        "clustering": [StrOptions({"bisect", "sequential"})],
        "inner": [str, BaseStrategy],
    }

    def validate(self):
        super().validate()
        if self.clustering == "sequential" and self.radius is None:
            raise ValueError("Compressed: clustering='sequential' (seed 003 Algorithm 1) is "
                             "driven by the radius; set radius (target_ratio is for 'bisect').")
        self._inner_strategy().validate()

    @property
    def n_candidates(self):
        return self._inner_strategy().n_candidates

    def preprocess(self, posterior, laplace, *, rng, anchor=None):
        """Compress the rows, then the inner strategy's preprocessing on the centroids: its
        :class:`StrategyData` on the centroid posterior, with the compression's outputs, cost
        and warning."""
        view, groups = clustering_view(posterior, joint=True)
        R = float(np.sqrt(np.max(np.einsum("nd,nd->n", posterior.X, posterior.X, dtype=float))))
        R = R if R > 0 else 1.0
        n_clusters = None if self.radius is not None else max(
            1, math.ceil(self.target_ratio * posterior.n_rows))
        comp = compress(view, groups=groups, weight=posterior.weight, n_refine=int(self.n_refine),
                        radius=None if self.radius is None else self.radius * R,
                        n_clusters=n_clusters, method=self.clustering, rng=rng)
        small = _centroid_posterior(posterior, comp, groups is not None)
        inner = self._inner_strategy().preprocess(small, laplace, rng=rng)
        shift, n_evals = mode_shift(small, laplace)
        ratio = small.n_rows / posterior.n_data
        outputs = {**inner.outputs, "compression_ratio": ratio, "n_centroids": small.n_rows,
                   "compression_radius": float(comp.radii.max() / R),
                   "compression_shift": shift, "compression_seconds": comp.seconds,
                   "compression_rounds": comp.n_rounds}
        warning = () if shift <= _SHIFT_WARN else (
            f"subsampling='compressed': the approximate posterior's mode is {shift:.2g} posterior "
            "sds from the exact one\n"
            f"(preprocessing_['compression_shift'], at compression ratio {ratio:.3g}).\n"
            "For a closer approximation use a smaller radius or a larger target_ratio.",)
        return replace(inner, n_grad_evals=inner.n_grad_evals + n_evals, outputs=outputs,
                       warnings=inner.warnings + warning)

    def estimator(self, data, *, batch_size):
        """The inner strategy's estimator on the centroids (``data`` from :meth:`preprocess`)."""
        return self._inner_strategy().estimator(
            data, batch_size=min(batch_size, data.posterior.n_rows))


def _centroid_posterior(posterior, comp, classifier):
    """The posterior on the centroids, with multiplicities as row weights."""
    d = posterior.X.shape[1]
    Xc = comp.centroids[:, :d].astype(posterior.X.dtype, copy=False)
    source = comp.groups if classifier else comp.centroids[:, d]
    yc = source.astype(posterior.y.dtype, copy=False)
    return Posterior(posterior.model, posterior.prior, np.ascontiguousarray(Xc), yc, comp.counts)
