"""Centroid compression of the data (approximate inference via clustering, seed 003).

``method="bisect"`` is a vectorised *bisecting 2-means*: starting from one cluster per group, every
round splits the chosen clusters at once -- seeds are the row farthest from the centroid and the
row farthest from that one, followed by ``n_refine`` Lloyd steps of 2-means inside each cluster --
until every cluster's radius ``max_i ||z_i - mu_j||`` is at most ``radius`` (or the widest clusters
have been split until there are ``n_clusters``).  Rows are visited in chunks, so memory beyond the
data is ``O(N)`` integers and floats.  ``method="sequential"`` is seed 003's Algorithm 1, one pass
over the rows (:mod:`._sequential`; memory ``O(N D)``).
"""

import time
from dataclasses import dataclass

import numpy as np

from ..utils import row_chunks
from ._sequential import sequential_labels
from ._stratify import group_sums

__all__ = ["Compression", "compress"]


@dataclass(frozen=True)
class Compression:
    """Result of :func:`compress`.

    ``centroids (c, D)`` weighted means, ``counts (c,)`` multiplicities ``n_j`` (sums of row
    weights), ``groups (c,)`` the group of each cluster (None without groups), ``radii (c,)``,
    ``labels (N,)``, ``n_rounds``, ``seconds``.
    """

    centroids: np.ndarray
    counts: np.ndarray
    groups: np.ndarray
    radii: np.ndarray
    labels: np.ndarray
    n_rounds: int
    seconds: float


def compress(view, *, groups=None, weight=None, radius=None, n_clusters=None, n_refine=1,
             method="bisect", rng=None, chunk=65536):
    """Cluster the rows of ``view`` within groups and summarise them by centroids.

    Parameters
    ----------
    view : RowView
        The vectors ``z_i`` (distances are Euclidean in their units).
    groups : ndarray of shape (N,), optional
        Group of each row (the class); clusters never mix groups.
    weight : ndarray of shape (N,), optional
        Positive row multiplicities ``w_i``.
    radius : float, optional
        Every cluster radius ends ``<= radius``.
    n_clusters : int, optional
        Instead of ``radius`` (``"bisect"`` only): split the widest clusters until there are this
        many (or every cluster is a set of identical rows).
    n_refine : int, default=1
        Lloyd steps of each 2-means split (``"bisect"``).
    method : {"bisect", "sequential"}, default="bisect"
        The clustering (module docstring).
    rng : Generator, optional
        ``"sequential"`` visits the rows in the order ``rng.permutation(N)`` (data order without).
    chunk : int, default=65536
        Rows per chunk.

    Returns
    -------
    Compression

    Notes
    -----
    Cluster ``S_j`` has multiplicity ``n_j = sum_{i in S_j} w_i``, centroid
    ``mu_j = sum_{i in S_j} w_i z_i / n_j`` and radius ``delta_j = max_{i in S_j} ||z_i - mu_j||``.

    References
    ----------
    Song, Q. (2022). Approximate inference via clustering. Preprint (§2, §3.2, Algorithm 1).
    """
    if (radius is None) == (n_clusters is None) or (method == "sequential" and radius is None):
        raise ValueError("compress needs exactly one of radius and n_clusters "
                         "(radius for method='sequential').")
    t0 = time.perf_counter()
    uniq, codes = (np.zeros(1), np.zeros(len(view), np.intp)) if groups is None else \
        np.unique(groups, return_inverse=True)
    if method == "sequential":
        labels = sequential_labels(view, codes, weight, radius, rng)
        cl, rounds = _Clusters(view, labels, weight, chunk), 1
    else:
        cl = _Clusters(view, codes, weight, chunk)
        rounds = cl.split_until(radius, n_clusters, n_refine)
    of = np.empty(cl.radii.size, np.intp)
    of[cl.labels] = codes
    return Compression(cl.centroids, cl.counts, None if groups is None else uniq[of],
                       cl.radii, cl.labels, rounds, time.perf_counter() - t0)


class _Clusters:
    """Labels, centroids, multiplicities, distances and radii, kept in sync."""

    def __init__(self, view, labels, weight, chunk):
        self.view, self.w, self.chunk = view, weight, chunk
        self.labels = np.array(labels, dtype=np.intp)
        c, N = int(self.labels.max()) + 1, len(view)
        self.counts, self.radii = np.zeros(c), np.zeros(c)
        self.centroids, self.dist = np.zeros((c, view.n_dims)), np.empty(N)
        self._refresh(np.arange(N), np.arange(c))

    def _chunks(self, rows):
        for sl in row_chunks(rows.size, self.view.n_dims, rows=self.chunk):
            yield sl, rows[sl], self.view.take(rows[sl])

    def _wt(self, r):
        return None if self.w is None else self.w[r]

    def _means(self, rows, gid, m):
        """Weighted means ``(m, D)`` and weights ``(m,)`` of rows grouped by ``gid``."""
        sums, cnt = np.zeros((m, self.view.n_dims)), np.zeros(m)
        for sl, r, Z in self._chunks(rows):
            sums += group_sums(gid[sl], Z, m, self._wt(r))
            cnt += np.bincount(gid[sl], self._wt(r), minlength=m)
        return sums / np.maximum(cnt, 1e-300)[:, None], cnt

    def _refresh(self, rows, ids):
        """Centroids of the clusters ``ids`` (made of exactly ``rows``), distances, radii."""
        pos = np.full(self.radii.size, -1)
        pos[ids] = np.arange(ids.size)
        self.centroids[ids], self.counts[ids] = self._means(rows, pos[self.labels[rows]], ids.size)
        for _, r, Z in self._chunks(rows):
            d = Z - self.centroids[self.labels[r]]
            self.dist[r] = np.sqrt(np.einsum("nd,nd->n", d, d))
        self.radii[ids] = 0.0
        np.maximum.at(self.radii, self.labels[rows], self.dist[rows])

    def split_until(self, radius, n_clusters, n_refine):
        """Bisect until :meth:`to_split` is empty; the number of rounds."""
        rounds = 0
        while (split := self.to_split(radius, n_clusters)).size:
            self.bisect(split, n_refine)
            rounds += 1
        return rounds

    def to_split(self, radius, n_clusters):
        """Clusters to split this round (empty when done)."""
        if radius is not None:
            return np.flatnonzero(self.radii > radius)
        m = int(n_clusters) - self.radii.size
        cand = np.flatnonzero(self.radii > 0) if m > 0 else np.zeros(0, np.intp)
        if cand.size > m:
            cand = cand[np.argpartition(-self.radii[cand], m - 1)[:m]]
        return cand

    def _argmax_rows(self, rows, q, vals, m):
        best = np.full(m, -np.inf)
        np.maximum.at(best, q, vals)
        hit = vals >= best[q]
        out = np.empty(m, np.intp)
        out[q[hit]] = rows[hit]
        return out

    def _sqdist(self, rows, q, P):
        out = np.empty(rows.size)
        for sl, _, Z in self._chunks(rows):
            d = Z - P[q[sl]]
            out[sl] = np.einsum("nd,nd->n", d, d)
        return out

    def _nearer_b(self, rows, q, A, B):
        return self._sqdist(rows, q, B) < self._sqdist(rows, q, A)

    def _lloyd(self, rows, q, h, m):
        """One 2-means step per pair; pairs whose split would empty a half keep ``h``."""
        means, cnt = self._means(rows, 2 * q + h, 2 * m)
        new = self._nearer_b(rows, q, means[0::2], means[1::2])
        n1, n = np.bincount(q, new, minlength=m), np.bincount(q, minlength=m)
        bad = (n1 == 0) | (n1 == n) | (cnt[0::2] == 0) | (cnt[1::2] == 0)
        return np.where(bad[q], h, new)

    def bisect(self, split, n_refine):
        """Split every cluster of ``split`` in two (identical-row clusters get radius 0)."""
        c, m = self.radii.size, split.size
        pos = np.full(c, -1)
        pos[split] = np.arange(m)
        rows = np.flatnonzero(pos[self.labels] >= 0)
        q = pos[self.labels[rows]]
        A = self.view.take(self._argmax_rows(rows, q, self.dist[rows], m))
        B = self.view.take(self._argmax_rows(rows, q, self._sqdist(rows, q, A), m))
        flat = np.all(A == B, axis=1)
        h = self._nearer_b(rows, q, A, B) & ~flat[q]
        for _ in range(n_refine):
            h = self._lloyd(rows, q, h, m)
        new_id = c + np.cumsum(~flat) - 1
        k = int((~flat).sum())
        self.counts = np.append(self.counts, np.zeros(k))
        self.radii = np.append(self.radii, np.zeros(k))
        self.centroids = np.vstack([self.centroids, np.zeros((k, self.view.n_dims))])
        self.labels[rows[h]] = new_id[q[h]]
        self._refresh(rows, np.concatenate([split, np.arange(c, c + k)]))
        self.radii[split[flat]] = 0.0
