"""Posterior-predictive class probabilities: fused, cache-sized, float32 for float32 data.

``predict_proba`` averages ``S`` draws' probabilities over ``n`` rows: ``S n`` exponentials after
a ``(S, d) x (d, n)`` product.  The kernels here work on row chunks small enough that the ``S x m``
logits stay in the L2 cache (:func:`cache_rows`), fold the intercept into the product (an
augmented design row ``[x_i, 1]``), and finish each chunk with a few in-place passes and one
reduction over the draws, so no ``S x n`` array is formed and the extra memory does not grow with
``n``.  They compute in float32 when ``X`` is float32 (:func:`compute_dtype`): rounding, ~1e-7,
is far below the Monte-Carlo error of an average over ``S`` draws (1/sqrt(S) of the posterior
spread), and float32 halves the memory traffic and doubles the SIMD width.  The GLM products
are small (``S x (d + 1)`` by ``(d + 1) x m``): BLAS threads gain little on them and, on a busy
machine, their spin-waiting can make ``predict_proba`` far slower.  So BLAS runs on one thread,
and the rows are split into one contiguous block per thread BLAS was allowed (its own limit, so
``threadpool_limits`` and joblib's worker limits hold), each block in a Python thread (numpy
releases the GIL in these loops).  The MLP's products are large and keep BLAS's threads.

Finite logits always give finite probabilities: softmax subtracts each draw's maximum, and the
binary kernel redoes the rare rows whose exponential overflowed (a logit below -709, or -88 in
float32) with clipped logits (:func:`binary_sums`).  A row whose logits are not finite (values
near 1e308 give ``inf`` or ``inf - inf``) would come out NaN: the estimators first move such
rows back along their ray (:func:`~skbayes_sg.models._finite.shrink_rows`).
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..utils import blas_threads, one_blas_thread, row_chunks
from ._sparse import draw_chunks, is_sparse, row_block

__all__ = ["DEFAULT_CHUNKS", "PredictChunks", "binary_sums", "cache_rows", "compute_dtype",
           "glm_mean", "network_mean", "normalize_rows", "softmax_sum"]


@dataclass(frozen=True, kw_only=True)
class PredictChunks:
    """The memory budgets of the predictive kernels (the defaults are the library's).

    Attributes
    ----------
    cache_bytes : int
        Working set of a row chunk: well inside a 2 MiB L2 cache.
    min_rows, max_rows : int
        Bounds on the rows of a chunk (below, the per-chunk overhead dominates; above, the
        buffers outgrow the cache for little gain).
    group_elements : int
        Parameters of a group of draws copied in the compute layout (4M values).
    threads : int or None
        Row blocks run in at most this many threads; None: one per thread BLAS may use.
    """

    cache_bytes: int = 1 << 20
    min_rows: int = 64
    max_rows: int = 4096
    group_elements: int = 1 << 22
    threads: int = None


DEFAULT_CHUNKS = PredictChunks()
#: largest |logit| fed to ``exp``: exp stays finite and ``1 + exp`` representable
_EXP_LIMIT = MappingProxyType({np.dtype(np.float64): 700.0, np.dtype(np.float32): 80.0})


def compute_dtype(X):
    """float32 when ``X`` is float32 (dense or sparse), float64 otherwise."""
    return np.dtype(np.float32) if X.dtype == np.float32 else np.dtype(np.float64)


def cache_rows(width, dtype, n_buffers=2, chunks=DEFAULT_CHUNKS):
    """Rows per chunk so that ``n_buffers`` arrays of ``width`` values per row fit the cache
    (``chunks.cache_bytes``)."""
    rows = chunks.cache_bytes // max(1, n_buffers * width * np.dtype(dtype).itemsize)
    return int(min(chunks.max_rows, max(chunks.min_rows, rows)))


def binary_sums(neg_z, out, buf, clip=False):
    """``out[i] = (sum_s P(0), sum_s P(1))`` from negated logits ``neg_z = -z`` ``(S, m)``.

    In place in ``neg_z``; ``buf`` is scratch of the same shape.  ``e = exp(-z)``,
    ``P(1) = 1 / (1 + e)`` and ``P(0) = e P(1)``: both keep their relative precision when tiny
    (no ``1 - p``), with one exponential and one division per draw and row.  A logit below
    about -709 (-88 in float32) overflows ``e`` and makes that row's ``P(0)`` NaN (so does a
    NaN logit); ``clip=True`` first clips ``-z`` to 700 (80) for the finite answer (NaN stays).
    """
    if clip:
        np.minimum(neg_z, _EXP_LIMIT[neg_z.dtype], out=neg_z)
    np.exp(neg_z, out=neg_z)
    np.add(neg_z, 1.0, out=buf)
    np.divide(1.0, buf, out=buf)
    out[:, 1] = np.ones(neg_z.shape[0], dtype=buf.dtype) @ buf
    out[:, 0] = np.einsum("sm,sm->m", neg_z, buf)
    return out


def softmax_sum(z, scratch):
    """``sum_s softmax(z[s], axis=0)`` ``(K, m)`` for class-major logits ``z (S, K, m)``.

    In place in ``z``; ``scratch`` ``(S, 1, m)``.  Each draw's maximum is subtracted, so every
    exponential is at most 1 and the denominators at least 1 (an infinite logit gives NaN).
    """
    np.max(z, axis=1, keepdims=True, out=scratch)
    z -= scratch
    np.exp(z, out=z)
    np.sum(z, axis=1, keepdims=True, out=scratch)
    np.divide(1.0, scratch, out=scratch)
    z *= scratch
    return z.sum(axis=0)


def normalize_rows(p, chunk=8192):
    """Divide each row of ``p`` by its sum, in place (sums over draws -> means, float32 rounding
    of the per-draw probabilities removed), ``chunk`` rows at a time (no per-row temporary)."""
    for start in range(0, p.shape[0], chunk):
        block = p[start:start + chunk]
        total = block[:, 0] + block[:, 1] if block.shape[1] == 2 else block.sum(axis=1)
        block /= total[:, None]
    return p


def glm_mean(coef, intercept, X, chunks=DEFAULT_CHUNKS):
    """Mean class probabilities ``(n, K)`` of a GLM over draws: ``coef (S, R, d)``, ``intercept
    (S, R)``; ``R = 1`` is binary (sigmoid, ``K = 2``), ``R = K`` softmax.  ``X`` dense or CSR.

    Draws go in groups whose coefficients (copied in the compute dtype) stay below
    ``chunks.group_elements`` values; rows in cache-sized chunks (:func:`cache_rows`), split into
    as many contiguous blocks as BLAS may use threads (the threads BLAS would have used, each
    running one-thread products; ``chunks.threads`` if set).
    """
    S, R, d = coef.shape
    dtype, n = compute_dtype(X), X.shape[0]
    out = np.zeros((n, max(R, 2)))
    blocks = _row_blocks(n, cache_rows(S * R, dtype, chunks=chunks), chunks.threads)
    with one_blas_thread(), ThreadPoolExecutor(len(blocks)) as pool:
        for g in draw_chunks((S, R * (d + 1)), 1, 1, chunks.group_elements):
            W = _glm_coef(coef[g], intercept[g], dtype)
            list(pool.map(lambda sl: _glm_sums(W, R, row_block(X, sl), out[sl], chunks),
                          blocks))
    return normalize_rows(out)


def _row_blocks(n, chunk, threads=None):
    """Contiguous row blocks, one per BLAS thread allowed now (or ``threads``), of at least 4
    chunks each."""
    k = int(max(1, min(blas_threads() if threads is None else threads, n // (4 * chunk))))
    edges = np.linspace(0, n, k + 1).round().astype(int)
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:])]


def _glm_coef(coef, intercept, dtype):
    """Rows ``[w, b]`` ``(S R, d + 1)`` in ``dtype``, negated when binary (``-z``)."""
    S, R, d = coef.shape
    W = np.empty((S * R, d + 1), dtype)
    W[:, :d] = coef.reshape(-1, d)
    W[:, d] = intercept.ravel()
    return np.negative(W, out=W) if R == 1 else W


def _glm_sums(W, R, X, out, chunks):
    """Add each row's probabilities summed over the draws of ``W (S R, d + 1)`` to ``out``.

    Binary rows whose sums came out NaN (an overflowed ``exp``, rare) are redone with clipping:
    cheaper than clipping every chunk.  Runs in a worker thread: sets its own error state.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return _glm_chunks(W, R, X, out, chunks)


def _glm_chunks(W, R, X, out, chunks):
    m = cache_rows(W.shape[0], W.dtype, chunks=chunks)
    logits = _Logits(W, X, m)
    part = np.empty((m, out.shape[1]))
    scratch = np.empty((W.shape[0] // R, 1, m) if R > 1 else (W.shape[0], m), W.dtype)
    for sl in row_chunks(X.shape[0], rows=m):
        k = sl.stop - sl.start
        if R > 1:
            out[sl] += softmax_sum(logits(sl, k).reshape(-1, R, k), scratch[..., :k]).T
            continue
        sums = binary_sums(logits(sl, k), part[:k], scratch[:, :k])
        bad = np.flatnonzero(np.isnan(sums[:, 0]))
        if bad.size:
            rows = bad + sl.start
            sums[bad] = binary_sums(logits(rows, bad.size), np.empty((bad.size, 2)),
                                    scratch[:, :bad.size], clip=True)
        out[sl] += sums
    return out


class _Logits:
    """``W [x_i, 1]`` for chunks of rows of ``X`` into one reused ``(S R, m)`` buffer.

    Dense ``X``: the rows are copied next to a column of ones (``d`` values per row, ``S R``
    times less than the product) so the intercepts ride in the product.  CSR ``X``: scipy's
    sparse-dense product with the transposed coefficients, made contiguous once.
    """

    def __init__(self, W, X, m):
        self.W, self.X, self.z = W, X, np.empty((W.shape[0], m), W.dtype)
        self.sparse = is_sparse(X)
        if self.sparse:
            self.WT = np.ascontiguousarray(W[:, :-1].T)
        else:
            self.design = np.ones((m, W.shape[1]), W.dtype)

    def __call__(self, rows, k):
        z = self.z[:, :k]
        if self.sparse:
            z[...] = (self.X[rows] @ self.WT).T
            z += self.W[:, -1:]
        else:
            self.design[:k, :-1] = self.X[rows]
            np.matmul(self.W, self.design[:k].T, out=z)
        return z


def network_mean(layers, activation, X, chunks=DEFAULT_CHUNKS):
    """Mean softmax probabilities ``(n, K)`` of a feed-forward network over draws.

    ``layers``: ``(coef (S, n_in, n_out), intercept (S, n_out))`` per layer; ``activation``
    in place on hidden pre-activations.  Draws go in groups of ``G`` (their parameters, in the
    compute dtype, below 4M values); per group and row chunk the first layer is one matrix
    product for all ``G`` draws (``(G h, d + 1) x (d + 1, m)``, intercepts in the product), the
    later ones one batched product each.  Dense ``X`` only.  ``chunks``: the budgets
    (:class:`PredictChunks`).
    """
    dtype, S = compute_dtype(X), layers[0][0].shape[0]
    widths = [c.shape[-1] for c, _ in layers]
    n_params = sum(c[0].size + b[0].size for c, b in layers)
    out = np.zeros((X.shape[0], widths[-1]))
    with np.errstate(over="ignore", invalid="ignore"):  # overflowing rows stay finite
        for g in draw_chunks((S, n_params), 1, 1, chunks.group_elements):
            stacked = _stack_layers([(c[g], b[g]) for c, b in layers], dtype)
            _network_sums(stacked, widths, activation, X, out, chunks)
    return normalize_rows(out)


def _stack_layers(layers, dtype):
    """Group parameters in the compute layout: ``[(G h_1, d + 1)]`` then ``(W^T (G, o, i),
    b (G, o, 1))`` per later layer (outputs are ``(G, width, rows)``: unit-stride rows)."""
    coef, intercept = layers[0]
    G, d, h = coef.shape
    first = np.empty((G, h, d + 1), dtype)
    first[..., :d] = coef.transpose(0, 2, 1)
    first[..., d] = intercept
    rest = [(c.transpose(0, 2, 1).astype(dtype), b[..., None].astype(dtype))
            for c, b in layers[1:]]
    return [first.reshape(G * h, d + 1), *rest]


def _network_sums(stacked, widths, activation, X, out, chunks):
    """Add the summed softmax over one group of draws to ``out`` for every row chunk."""
    first, rest = stacked[0], stacked[1:]
    G, dtype = first.shape[0] // widths[0], first.dtype
    m = int(min(chunks.max_rows,
                max(chunks.min_rows, chunks.group_elements // (G * max(widths)))))
    design = np.ones((m, first.shape[1]), dtype)
    bufs = [np.empty((G, w, m), dtype) for w in widths]
    scratch = np.empty((G, 1, m), dtype)
    for sl in row_chunks(X.shape[0], rows=m):
        k = sl.stop - sl.start
        design[:k, :-1] = X[sl]
        a = bufs[0][..., :k]
        np.matmul(first, design[:k].T, out=a.reshape(G * widths[0], k))
        for (W, b), buf in zip(rest, bufs[1:]):
            activation(a)
            a = np.matmul(W, a, out=buf[..., :k])
            a += b
        out[sl] += softmax_sum(a, scratch[..., :k]).T
    return out
