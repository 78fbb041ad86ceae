"""Stratified minibatches over k-means strata (CP-SG-MCMC, methods.md §3)."""

from dataclasses import replace
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ..preprocessing import RowView, allocate_batch, kmeans_strata, merge_strata

from ._base import CORRECTION_CONSTRAINT, IndexedStrategy, check_dense
from ._index import BlockIndex, uniform_subsets

__all__ = ["Stratified", "StratifiedIndex", "clustering_view"]


def clustering_view(posterior, joint):
    """``(RowView, groups)``: the vectors ``z_i`` a clustering works on.

    ``joint=False``: the features alone.  ``joint=True``: for regression the
    features with the target as one more coordinate; for classification the
    features, clustered separately within each class (``groups = y``).  Sparse ``X`` raises a
    ValueError naming the strategies that work on it.
    """
    check_dense(posterior.X)
    if not joint:
        return RowView(posterior.X), None
    if posterior.model.is_regression:
        return RowView(posterior.X, np.asarray(posterior.y, dtype=np.float64)), None
    return RowView(posterior.X), posterior.y


class StratifiedIndex(BlockIndex):
    """Independent stratified minibatches: ``b_j`` rows from stratum ``j``.

    Every step and chain draws, for every stratum, a uniform ``b_j``-subset of its ``n_j`` rows
    (without replacement, independently across steps, strata and chains).  ``weight_i = n_j / b_j``
    and ``scale = 1``, so ``sum_B weight_i ∇f_i`` is unbiased (seed 000 eq. 10).
    """

    def __init__(self, labels, allocation):
        self.allocation = np.asarray(allocation, dtype=np.int64)
        super().__init__(labels.size, int(self.allocation.sum()))
        self.sizes = np.bincount(labels, minlength=self.allocation.size)
        self.order = np.argsort(labels, kind="stable")  # rows sorted by stratum
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        self.weight_row = np.repeat(self.sizes / self.allocation, self.allocation)

    def chain_block(self, rng, n_steps):
        out, col = np.empty((n_steps, self.b), dtype=np.intp), 0
        for n_j, b_j, off in zip(self.sizes, self.allocation, self.offsets):
            if b_j == n_j:
                pos = np.arange(n_j)
            else:
                pos = uniform_subsets(rng, int(n_j), int(b_j), n_steps)
            out[:, col:col + b_j] = self.order[off + pos]
            col += b_j
        return out

    def block_weights(self, idx):
        """The constant ``n_j / b_j`` row: one read-only ``(C, b)`` array for every step."""
        row = np.ascontiguousarray(np.broadcast_to(self.weight_row, idx.shape[1:]))
        return np.broadcast_to(row, idx.shape)


class Stratified(IndexedStrategy):
    """Stratified minibatches over k-means clusters (CP-SG-MCMC).

    Parameters
    ----------
    n_clusters : int, default=20
        Number of strata ``k`` (seed 000 uses 10 for logistic regression and 20 for the neural
        network).  k-means makes ``min(n_clusters, n_samples)`` strata, at least one per class
        when ``features="xy"`` for a classifier, once per fit; where that exceeds ``batch_size``
        the two smallest strata are merged repeatedly until there are ``b``.
    max_iter : int, default=5
        Lloyd iterations of k-means (epochs of ``MiniBatchKMeans`` above
        50,000 rows): early termination, seed 000 §4.1.
    features : {"xy", "x"}, default="xy"
        What is clustered.  ``"x"``: the features alone (as seed 000).  ``"xy"``: for classifiers,
        the features within each class (gradients of different classes point different ways, so
        mixed strata are wide); for regression, ``[x_i, y_i]`` in the data's own units.  ``"xy"``
        usually leaves less gradient noise, unless many classes leave each only a few clusters
        (``benchmarks/results/bench_stratified.md`` compares both).
    correction : {"plain", "cv", "svrg"} or correction object, default="plain"
        ``"plain"``: eq. 10 below.  ``"cv"``: control variates at the mode
        (methods.md §4) with the stratified index,
        ``g = ∇f_0 + G + sum_j (n_j/b_j) sum_{B_j} [∇f_i(theta) - ∇f_i(theta_hat)]``.
        ``"svrg"`` (or :class:`SVRGAnchor`): the same with refreshed anchors.
    shared_minibatch : bool, default=False
        Whether all chains use the same stratified minibatch in a step (see :class:`Uniform`).

    Notes
    -----
    k-means on the vectors ``z_i`` gives strata ``C_j`` with sizes ``n_j`` and
    within-stratum variances ``v_j = (1/n_j) sum_{C_j} ||z_i - mu_j||^2``; the
    minibatch takes ``b_j ∝ n_j sqrt(v_j)`` rows of ``C_j`` (eq. 14; integers
    with ``1 <= b_j <= n_j``, ``sum b_j = b``, see
    :func:`~skbayes_sg.preprocessing.allocate_batch`) and::

        g = ∇f_0(theta) + sum_j (n_j / b_j) sum_{i in B_j} ∇f_i(theta)   (eq. 10)

    Unbiased for any strata (Lemma 3.3).  ``preprocessing_`` gets ``strata_sizes`` (``n_j``),
    ``batch_allocation`` (``b_j``), ``n_strata``, ``kmeans_seconds``, ``kmeans_inertia`` and
    ``kmeans_iterations``.

    References
    ----------
    Fu, T. and Zhang, Z. (2017). CPSG-MCMC: Clustering-based preprocessing
    method for stochastic gradient MCMC. AISTATS.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skbayes_sg import BayesianLogisticRegression
    >>> from skbayes_sg.subsampling import Stratified
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> clf = BayesianLogisticRegression(subsampling=Stratified(n_clusters=10), batch_size=100,
    ...                                  n_draws=200, random_state=0).fit(X, y)
    >>> pre = clf.preprocessing_
    >>> pre["n_strata"], int(pre["batch_allocation"].sum()), int(pre["strata_sizes"].sum())
    (10, 100, 569)
    """

    name = "stratified"
    supports_sparse = False
    needs_rows = frozenset({"whole"})  # k-means on the rows

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "features": [StrOptions({"x", "xy"})],
        "correction": CORRECTION_CONSTRAINT,
        "shared_minibatch": ["boolean"],
    }

    def __init__(self, n_clusters=20, max_iter=5, features="xy", correction="plain",
                 shared_minibatch=False):
        self.n_clusters = n_clusters
        self.max_iter = max_iter
        self.features = features
        self.correction = correction
        self.shared_minibatch = shared_minibatch

    def preprocess(self, posterior, laplace, *, rng, anchor=None):
        """k-means strata of the rows (``n_clusters``, merged at a smaller batch), and the
        correction's data."""
        data = super().preprocess(posterior, laplace, rng=rng, anchor=anchor)
        view, groups = clustering_view(posterior, self.features == "xy")
        k = min(int(self.n_clusters), posterior.n_rows)
        strata, info = kmeans_strata(view, k, groups=groups, max_iter=int(self.max_iter), rng=rng)
        return replace(data, index=strata, outputs={**data.outputs, **info})

    def estimator(self, data, *, batch_size):
        b = min(int(batch_size), data.posterior.n_rows)
        strata = data.index if data.index.sizes.size <= b else merge_strata(data.index, b)
        alloc = allocate_batch(strata.sizes, np.sqrt(strata.variances), b)
        outputs = {**data.outputs, "strata_sizes": strata.sizes, "batch_allocation": alloc,
                   "n_strata": int(alloc.size)}
        return self._estimator(data, StratifiedIndex(strata.labels, alloc), outputs=outputs)
