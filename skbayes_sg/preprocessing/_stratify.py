"""k-means strata and their per-stratum minibatch sizes (CP-SG-MCMC, seed 000).

Everything here runs once in ``fit``.  Memory stays bounded for millions of rows: k-means is fitted
on at most :data:`FIT_MAX_ROWS` rows (exact Lloyd up to :data:`KMEANS_MAX_ROWS` rows,
``MiniBatchKMeans`` above), then every row is assigned to its nearest centre in chunks,
accumulating the stratum sizes, means and within-stratum variances on the way.
"""

import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans, MiniBatchKMeans
from sklearn.exceptions import ConvergenceWarning

from ..utils import row_chunks

__all__ = ["RowView", "Strata", "allocate_batch", "group_sums", "kmeans_strata", "merge_strata"]

KMEANS_MAX_ROWS = 50_000
FIT_MAX_ROWS = 200_000


class RowView:
    """Rows ``z_i = [x_i, extra_i]`` gathered on demand (never all at once)."""

    def __init__(self, X, extra=None):
        self.X, self.extra = X, extra
        self.n_dims = X.shape[1] + (extra is not None)

    def __len__(self):
        return self.X.shape[0]

    def take(self, rows):
        """``(len(rows), n_dims)`` float64 copy of the rows ``rows``."""
        Z = np.asarray(self.X[rows], dtype=np.float64)
        return Z if self.extra is None else np.column_stack([Z, self.extra[rows]])


def group_sums(gid, Z, n_groups, weight=None):
    """``(n_groups, D)`` sums of the rows of ``Z`` per group ``gid`` (weighted)."""
    w = np.ones(gid.size) if weight is None else weight
    onehot = sparse.csr_matrix((w, (gid, np.arange(gid.size))), shape=(n_groups, gid.size))
    return np.asarray(onehot @ Z)


@dataclass(frozen=True)
class Strata:
    """Strata: ``labels (N,)`` in 0..k-1, sizes ``n_j``, means, variances ``v_j``."""

    labels: np.ndarray
    sizes: np.ndarray
    means: np.ndarray
    variances: np.ndarray


def _fit_centres(Z, k, max_iter, seed):
    """k-means centres ``(k, D)`` and Lloyd iterations, early-terminated."""
    if k == 1:
        return Z.mean(axis=0, keepdims=True), 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if Z.shape[0] <= KMEANS_MAX_ROWS:
            km = KMeans(k, max_iter=max_iter, n_init=1, random_state=seed).fit(Z)
        else:
            km = MiniBatchKMeans(k, max_iter=max_iter, n_init=1, batch_size=4096,
                                 compute_labels=False, random_state=seed).fit(Z)
    return km.cluster_centers_, int(km.n_iter_)


def _assign(view, rows, centres, first, acc):
    """Nearest-centre labels of ``rows`` (chunked); accumulate stratum sums."""
    cc = np.einsum("kd,kd->k", centres, centres)
    acc["centre"][first:first + len(centres)] = centres
    for sl in row_chunks(rows.size, view.n_dims + len(centres)):
        r = rows[sl]
        Z = view.take(r)
        lab = np.argmin(cc - 2.0 * Z @ centres.T, axis=1)
        acc["labels"][r] = first + lab
        diff = Z - centres[lab]
        acc["count"][first:first + len(centres)] += np.bincount(lab, minlength=len(centres))
        acc["sum"][first:first + len(centres)] += group_sums(lab, Z, len(centres))
        acc["ss"][first:first + len(centres)] += np.bincount(
            lab, np.einsum("nd,nd->n", diff, diff), minlength=len(centres))


def kmeans_strata(view, n_clusters, *, groups=None, max_iter=5, rng=None):
    """k-means strata of the rows of ``view``, separately within each group.

    Parameters
    ----------
    view : RowView
    n_clusters : int
        Total number of clusters (at least one per group).
    groups : ndarray of shape (N,), optional
        Group code per row (e.g. the class); clusters never mix groups and
        each group gets ``k_g ∝ n_g`` of the clusters (at least one).
    max_iter : int
        Lloyd iterations (epochs for ``MiniBatchKMeans``): early termination.
    rng : Generator

    Returns
    -------
    strata : Strata
        Empty clusters (duplicate rows) are dropped.
    info : dict
        ``kmeans_seconds``, ``kmeans_inertia`` (sum of squared distances to
        the centres), ``kmeans_iterations`` (max over groups).
    """
    t0, N = time.perf_counter(), len(view)
    codes = np.zeros(N, np.intp) if groups is None else np.unique(groups, return_inverse=True)[1]
    members = np.split(np.argsort(codes, kind="stable"), np.cumsum(np.bincount(codes))[:-1])
    sizes = np.array([m.size for m in members])
    k_g = allocate_batch(sizes, np.ones(sizes.size), min(max(n_clusters, sizes.size), N))
    total, D = int(k_g.sum()), view.n_dims
    acc = {"labels": np.empty(N, np.intp), "count": np.zeros(total), "ss": np.zeros(total),
           "sum": np.zeros((total, D)), "centre": np.zeros((total, D))}
    first, n_iter = 0, 0
    for rows, k in zip(members, k_g):
        fit_rows = rows if rows.size <= FIT_MAX_ROWS else np.sort(
            rng.choice(rows, FIT_MAX_ROWS, replace=False))
        centres, it = _fit_centres(view.take(fit_rows), int(k), max_iter,
                                   int(rng.integers(2**31 - 1)))
        _assign(view, rows, centres, first, acc)
        first, n_iter = first + int(k), max(n_iter, it)
    return _finish(acc), {"kmeans_seconds": time.perf_counter() - t0,
                          "kmeans_inertia": float(acc["ss"].sum()),
                          "kmeans_iterations": n_iter}


def _finish(acc):
    """Drop empty clusters; means and variances about the means."""
    keep = acc["count"] > 0
    relabel = np.cumsum(keep) - 1
    n = acc["count"][keep]
    means = acc["sum"][keep] / n[:, None]
    # parallel axis: (1/n) sum ||z - mu||^2 = (1/n) sum ||z - c||^2 - ||mu - c||^2 (c the centre)
    off = means - acc["centre"][keep]
    v = acc["ss"][keep] / n - np.einsum("kd,kd->k", off, off)
    return Strata(relabel[acc["labels"]], n.astype(np.int64), means, np.maximum(v, 0.0))


def merge_strata(strata, max_strata):
    """Merge the two smallest strata until at most ``max_strata`` remain.

    Used when there are more strata than the minibatch has rows (``b < k``,
    e.g. more classes than ``b``), since every stratum needs ``b_j >= 1``.
    Sizes, means and variances of a union are exact (pooled moments).
    """
    n = dict(enumerate(strata.sizes.astype(float)))
    mu, v = dict(enumerate(strata.means)), dict(enumerate(strata.variances))
    owner = np.arange(len(n))  # representative of each original stratum
    while len(n) > max_strata:
        i, j = sorted(n, key=lambda a: (n[a], a))[:2]
        m = n[i] + n[j]
        mean = (n[i] * mu[i] + n[j] * mu[j]) / m
        v[i] = sum(n[a] * (v[a] + np.sum((mu[a] - mean) ** 2)) for a in (i, j)) / m
        n[i], mu[i] = m, mean
        owner[owner == j] = i
        del n[j], mu[j], v[j]
    keys, new = np.unique(owner, return_inverse=True)
    return Strata(new[strata.labels], np.array([n[a] for a in keys], np.int64),
                  np.array([mu[a] for a in keys]), np.array([v[a] for a in keys]))


def _water_fill(a, n, b):
    """Continuous optimum ``t_j = clip(lam a_j, 1, n_j)`` with ``sum t_j = b``."""
    pos = a > 0
    lo, hi = 0.0, float(np.max(n[pos] / a[pos]))
    for _ in range(200):
        lam = 0.5 * (lo + hi)
        if np.clip(lam * a, 1, n).sum() < b:
            lo = lam
        else:
            hi = lam
    return np.clip(hi * a, 1, n)


def allocate_batch(sizes, spread, batch_size):
    """Integer batch sizes ``b_j ∝ n_j spread_j`` with ``1 <= b_j <= n_j``, ``sum = b``.

    The continuous optimum of ``sum_j n_j^2 v_j / b_j`` under the box constraints (seed 000 eq. 14
    with ``spread = sqrt(v)``, water-filled so that clipped strata give their share to the others)
    is rounded by largest remainders, then repaired one unit at a time towards the continuous
    targets.  Strata with zero spread get ``b_j = 1``; if every spread is 0 the allocation is
    proportional to ``n_j``.

    Raises
    ------
    ValueError
        Unless ``k <= batch_size <= sum(n_j)``.
    """
    n = np.asarray(sizes, dtype=np.int64)
    a = n * np.asarray(spread, dtype=float)
    b = int(batch_size)
    if not n.size <= b <= n.sum() or np.any(n < 1):
        raise ValueError(f"Cannot allocate batch_size={b} over {n.size} strata of "
                         f"{n.sum()} rows: need n_strata <= batch_size <= n_rows.")
    target = _water_fill(a if np.any(a > 0) else n.astype(float), n, b)
    alloc = np.clip(np.floor(target).astype(np.int64), 1, n)
    room = np.flatnonzero(alloc < n)
    extra = room[np.argsort(alloc[room] - target[room], kind="stable")]
    alloc[extra[:max(b - alloc.sum(), 0)]] += 1
    while alloc.sum() != b:
        if alloc.sum() < b:
            j = np.argmax(np.where(alloc < n, target - alloc, -np.inf))
            alloc[j] += 1
        else:
            j = np.argmax(np.where(alloc > 1, alloc - target, -np.inf))
            alloc[j] -= 1
    return alloc
