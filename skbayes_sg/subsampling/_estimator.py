"""The gradient estimator: a posterior, an index sampler and correction terms.

Every strategy's ``build`` returns one of the two classes here, fully built:

* :class:`GradientEstimator` -- per step, draw rows with the index sampler
  and sum the correction terms over them::

      g = ∇f_0(theta) + g_a + scale * sum_{i in B} w_i m_i [∇f_i(theta) - ∇f_i(theta_a)]

  (``w_i`` the index weights, ``m_i`` the row multiplicities, ``g_a`` and
  ``theta_a`` the correction's anchor; plain terms have neither);
* :class:`ExactGradient` -- ``∇U`` itself (``exact = True``, with ``potential``).

Protocol (what the samplers consume): ``init(rngs, theta) -> state``;
``estimate(rngs, theta, state) -> (g (C, p), state, n_grad_evals)`` with
``rngs`` one Generator per chain; ``n_candidates`` and ``candidates(rngs,
theta, state) -> (G (M, C, p), state, n_grad_evals)``; ``pilot()``; ``kick()``
(the field HMC kicks with: itself, or the exact gradient in float32); and the
attributes:

* ``exact`` -- ``estimate`` is the exact ``∇U`` (then ``potential`` exists, as HMC needs);
* ``n_data`` -- N (sum of multiplicities); ``n_candidates`` -- estimates per step
  the sampler chooses among (EWSG), else 1;
* ``evals_per_step`` -- nominal per-example gradient evaluations per step and chain;
* ``outputs`` -- what the preprocessing produced (stored in ``preprocessing_``);
  ``preprocessing_evals`` -- per-example evaluations spent in the preprocessing and the build;
* ``warnings`` -- messages ``fit`` emits as ``ApproximationWarning``.
"""

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from ..models import minibatch_dtype
from ._rows import rows_of

__all__ = ["ExactGradient", "GradientEstimator", "minibatch_dtype"]

# A GLM's minibatch work is a few products per gathered float (K outputs), so wide rows make the
# step memory-bound: gathered, then read by the predictor and again by the gradient.  Above this
# many bytes of gathered rows (all chains; an L2 cache's worth) the sum runs over column chunks of
# the minibatch that stay in cache (the same sum up to rounding; much larger chunks spill from
# the cache, much smaller ones pay more per-chunk overhead)
_CHUNK_BYTES = 2 << 20


class _Estimator:
    """What every estimator carries (attributes in the module docstring)."""

    exact = False
    n_candidates = 1
    shared_minibatch = False  # every chain reads the first chain's rows each step

    def __init__(self, posterior, *, outputs=None, preprocessing_evals=0, warnings=()):
        self.posterior, self.n_data = posterior, posterior.n_data
        self.outputs = {} if outputs is None else outputs
        self.preprocessing_evals = int(preprocessing_evals)
        self.warnings = tuple(warnings)

    def pilot(self):
        """The estimator whose gradient noise the step-size pilot measures (``self``)."""
        return self

    def kick(self):
        """The field HMC's leapfrog kicks with (``self``; :meth:`ExactGradient.kick`)."""
        return self


class ExactGradient(_Estimator):
    """The exact gradient ``∇U`` in row chunks, and the potential ``U``."""

    exact = True

    def __init__(self, posterior, **kwargs):
        super().__init__(posterior, **kwargs)
        self.evals_per_step = float(posterior.n_rows)

    def init(self, rngs, theta):
        """No state."""
        return None

    def estimate(self, rngs, theta, state):
        """``(∇U(theta) (C, p), state, C * n_rows)``."""
        return self.posterior.full_grad(theta), state, theta.shape[0] * self.posterior.n_rows

    def potential(self, theta):
        """``U(theta)`` ``(C,)``."""
        return self.posterior.potential(theta)

    def kick(self):
        """This gradient with the rows' sums in float32, for a leapfrog's kicks.

        Any deterministic field of the position keeps HMC's proposal reversible and
        volume-preserving, and its Metropolis test uses the float64 :meth:`potential`, so the
        chain stays exact; the products take about half the time.  ``self`` unless the rows are
        a dense float64 array.
        """
        X = self.posterior.X
        if not (isinstance(X, np.ndarray) and X.dtype == np.float64):
            return self
        return _SinglePrecisionGradient(self.posterior)


class _SinglePrecisionGradient(ExactGradient):
    """:meth:`ExactGradient.kick`: the likelihood's sum over float32 rows, the prior's in
    float64 (its precision can span many orders)."""

    def __init__(self, posterior, **kwargs):
        super().__init__(posterior, **kwargs)
        w = posterior.weight
        self._rows = replace(posterior, X=posterior.X.astype(np.float32),
                             weight=None if w is None else w.astype(np.float32))

    def estimate(self, rngs, theta, state):
        """``(≈ ∇U(theta) (C, p) in float64, state, C * n_rows)``."""
        g = self._rows.row_sum(self.posterior.model.grad_sum, theta.astype(np.float32),
                               native=True)
        return (g + self.posterior.prior.grad(theta), state,
                theta.shape[0] * self.posterior.n_rows)

    def kick(self):
        return self


class GradientEstimator(_Estimator):
    """Index sampler x correction terms on a posterior (see the module docstring).

    Parameters
    ----------
    posterior : Posterior
    index : index sampler
        ``b``, ``scale``, ``ragged``, ``init``, ``draw`` (see ``_index``).
    terms : correction terms
        Built by a correction (see ``_corrections``).
    n_candidates : int, default=1
    outputs : dict, optional
    preprocessing_evals : int, default=0
        Cost of the preprocessing (:class:`~skbayes_sg.subsampling.StrategyData`), besides the
        terms' own ``preprocessing_evals`` (what depends on the batch size).
    warnings : tuple of str, default=()
    rows_per_step : float, optional
        Mean rows per step and chain, where not ``index.b`` (adaptive sizes): ``evals_per_step``
        is the terms' at that many rows, times ``n_candidates``.
    """

    chunk_bytes = _CHUNK_BYTES  # (_chunks; a test sets another on its estimator)

    def __init__(self, posterior, index, terms, *, n_candidates=1, outputs=None,
                 preprocessing_evals=0, warnings=(), rows_per_step=None):
        super().__init__(posterior, outputs={**(outputs or {}), **terms.outputs},
                         preprocessing_evals=preprocessing_evals + terms.preprocessing_evals,
                         warnings=warnings)
        self.index, self.terms, self.n_candidates = index, terms, int(n_candidates)
        self.shared_minibatch = bool(getattr(index, "shared", False))
        self.evals_per_step = self.n_candidates * terms.evals_per_step(
            index.b if rows_per_step is None else rows_per_step)
        self.compute_dtype = rows_of(posterior).compute_dtype
        X = posterior.X
        wide = posterior.model.is_glm and not sp.issparse(X)
        self._row_bytes = X.shape[1] * X.dtype.itemsize if wide else None
        self._slices = {}  # minibatch shape -> its chunks (_chunks)

    def init(self, rngs, theta):
        """``(index state, terms state)`` for chains ``theta (C, p)``."""
        return self.index.init(rngs, theta.shape[0]), self.terms.init(rngs, theta)

    def estimate(self, rngs, theta, state):
        """``(g (C, p), state, n_grad_evals)``, ``g ≈ ∇U(theta)`` per chain (a fresh float64
        array the caller may overwrite)."""
        index_state, terms_state = state
        g_a, terms_state, n, at_anchor = self.terms.begin(rngs, theta, terms_state)
        if at_anchor:
            g = self.posterior.prior.grad(theta)
            g += g_a
            return g, (index_state, terms_state), n
        idx, w, index_state = self.index.draw(rngs, theta, index_state)
        g, k = self._batch_sum(theta, idx, w, terms_state)
        g = np.multiply(g, self.index.scale, dtype=np.float64)  # float32 sums come back here
        if g_a is not None:
            g += g_a
        g += self.posterior.prior.grad(theta)
        return g, (index_state, terms_state), n + k

    def _batch_sum(self, theta, idx, w, terms_state):
        """The minibatch sum (before ``scale``) and its cost; one call per chain if ragged.

        On float32 ``X`` the minibatch arithmetic runs in float32 (``theta`` cast once per
        step); the caller scales the sum back into float64.
        """
        pb, terms = self.posterior, self.terms
        if self.compute_dtype is not None:
            theta = theta.astype(self.compute_dtype)
        if not self.index.ragged:  # idx (C, b), or (b,) shared by every chain
            g = None
            for at in self._chunks(idx.shape):
                ic = idx[at]
                part = terms.difference(theta, *pb.rows(ic), pb.merge_weight(
                    ic, None if w is None else w[at]), ic, terms_state, slice(None))
                g = part if g is None else np.add(g, part, out=g)
            return g, terms.per_row * idx.shape[-1] * theta.shape[0]
        g, n = np.empty_like(theta), 0
        for c, rows in enumerate(idx):
            wc = pb.merge_weight(rows, None if w is None else w[c])
            g[c] = terms.difference(theta[c:c + 1], *pb.rows(rows), wc, rows, terms_state,
                                    slice(c, c + 1))[0]
            n += rows.size
        return g, terms.per_row * n

    def _chunks(self, shape):
        """Keys of the column chunks of an ``(C, b)`` minibatch, or of a shared ``(b,)`` one:
        the whole, or cache-sized chunks for a GLM's dense rows (``chunk_bytes``); worked out
        once per shape.  Explicit slices, not ``...``: a dask ``Batch`` indexes its rows by the
        leading axes."""
        if shape not in self._slices:
            C, b = (shape[0] if len(shape) == 2 else 1), shape[-1]
            size = b
            if self._row_bytes is not None:
                size = max(16, self.chunk_bytes // (C * self._row_bytes))
            cols = ([slice(None)] if size >= b
                    else [slice(k, k + size) for k in range(0, b, size)])
            self._slices[shape] = [(slice(None), c) if len(shape) == 2 else c for c in cols]
        return self._slices[shape]

    def candidates(self, rngs, theta, state):
        """``n_candidates`` estimates per chain from one batched gradient call.

        ``G[m]`` uses the index sampler's ``m``-th minibatch of this step (each chain from its own
        stream), ``theta`` tiled ``M`` times; every ``G[m]`` is distributed as ``estimate``'s.  For
        terms whose anchor stays fixed during sampling (plain, control variates).
        """
        M, (index_state, terms_state) = self.n_candidates, state
        draws = []
        for _ in range(M):
            idx, w, index_state = self.index.draw(rngs, theta, index_state)
            draws.append((idx, w))
        idx = np.concatenate([d[0] for d in draws])
        w = None if draws[0][1] is None else np.concatenate([d[1] for d in draws])
        g, n = self._batch_sum(np.tile(theta, (M, 1)), idx, w, terms_state)
        g = np.multiply(g, self.index.scale, dtype=np.float64)
        g = g.reshape(M, *theta.shape)
        if self.terms.offset is not None:
            g += self.terms.offset
        g += self.posterior.prior.grad(theta)
        return g, (index_state, terms_state), n

    def pilot(self):
        """``self``, or the same index with the terms' pilot (SVRG's white-noise equivalent)."""
        terms = self.terms.pilot()
        if terms is self.terms:
            return self
        pilot = GradientEstimator(self.posterior, self.index, terms, outputs=self.outputs)
        pilot.preprocessing_evals = 0  # built with self, and counted there
        return pilot
