"""Seed 003's Algorithm 1 ("raw clustering"): one sequential pass, clusters of radius <= delta.

Row ``i`` (in visiting order) asks ``Find-Nearest-Neighbor(z_i, T, 2 delta)`` for a row of an
existing cluster within ``2 delta``; it joins that row's cluster ``S_j`` if the radius of
``S_j + {z_i}`` about its new centroid stays ``<= delta``, and otherwise starts a cluster.  The
oracle here is exact (a k-d tree query for the nearest *earlier* row), where the paper uses E2LSH.
Used by :func:`~skbayes_sg.preprocessing.compress` (``method="sequential"``).

References
----------
Song, Q. (2022). Approximate inference via clustering. Preprint (§3.2, Algorithm 1).
"""

import numpy as np
from scipy.spatial import cKDTree

__all__ = ["sequential_labels"]


def sequential_labels(view, codes, weight, delta, rng):
    """Cluster labels of Algorithm 1, run on every group separately.

    Parameters
    ----------
    view : RowView
        The vectors ``z_i``.
    codes : ndarray of shape (N,)
        Group of each row, in ``0..G-1`` (every group non-empty); clusters never mix groups.
    weight : ndarray of shape (N,) or None
        Positive row multiplicities ``w_i`` (the centroids are weighted means).
    delta : float
        The radius, in the units of ``view``.
    rng : Generator or None
        The rows are visited in the order ``rng.permutation(N)`` (data order when None).

    Returns
    -------
    labels : ndarray of shape (N,)
        Cluster of each row, ``0..c-1``, every cluster of radius ``<= delta`` about its centroid.
    """
    order = np.arange(len(view)) if rng is None else rng.permutation(len(view))
    labels, c = np.empty(len(view), np.intp), 0
    for g in range(int(codes.max()) + 1):
        rows = order[codes[order] == g]
        Z = view.take(rows)
        w = np.ones(rows.size) if weight is None else np.asarray(weight, float)[rows]
        lab = _one_pass(Z, w, float(delta), _nearest_earlier(Z, 2.0 * delta))
        labels[rows], c = lab + c, c + int(lab.max()) + 1
    return labels


def _nearest_earlier(Z, reach, block=1 << 22):
    """For every row ``i`` the nearest row ``k < i`` with ``||z_i - z_k|| <= reach``, or -1.

    Exact k-d tree queries (the ideal form of the paper's LSH oracle) for the ``m`` nearest rows,
    ``m`` growing 4x for rows whose neighbours within ``reach`` all come later so far.
    """
    n, tree = Z.shape[0], cKDTree(Z)
    nn, todo, m = np.full(n, -1, np.intp), np.arange(n), 8
    bound = np.nextafter(reach, np.inf)  # the query excludes distances == bound
    while todo.size:
        m, more = min(m, n), []
        for part in np.array_split(todo, -(-todo.size * m // block)):  # <= block entries each
            j = tree.query(Z[part], k=m, distance_upper_bound=bound)[1].reshape(part.size, m)
            earlier = j < part[:, None]  # a missing neighbour is j == n
            hit = earlier.any(axis=1)
            nn[part[hit]] = j[hit, earlier[hit].argmax(axis=1)]
            more.append(part[~hit & (j[:, -1] < n)])
        todo, m = (np.concatenate(more), 4 * m) if m < n else (todo[:0], m)
    return nn


def _one_pass(Z, w, delta, nn):
    """Algorithm 1's pass given each row's nearest earlier row ``nn`` (or -1): the labels.

    A cluster keeps its centroid ``mu``, weight ``W`` and an upper bound ``r`` on its radius.
    Adding ``z`` moves the centroid to ``mu' = mu + w (z - mu) / (W + w)``; ``max(||z - mu'||,
    r + ||mu' - mu||)`` bounds the new radius, and the exact radius over the members is computed
    only when that bound exceeds ``delta``.
    """
    n = Z.shape[0]
    lab, mu, W, rad, members, c = np.empty(n, np.intp), np.empty_like(Z), np.zeros(n), \
        np.zeros(n), [], 0
    for i in range(n):
        j = lab[nn[i]] if nn[i] >= 0 else -1
        if j >= 0:
            tot = W[j] + w[i]
            new = mu[j] + (w[i] / tot if tot > 0 else 0.0) * (Z[i] - mu[j])
            dz, dm = Z[i] - new, new - mu[j]
            r = max(np.sqrt(dz @ dz), rad[j] + np.sqrt(dm @ dm))
            if r > delta:
                D = Z[members[j] + [i]] - new
                r = np.sqrt(np.max(np.einsum("nd,nd->n", D, D)))
            if r <= delta:
                lab[i], mu[j], W[j], rad[j] = j, new, tot, r
                members[j].append(i)
                continue
        lab[i], mu[c], W[c] = c, Z[i], w[i]
        members.append([i])
        c += 1
    return lab
