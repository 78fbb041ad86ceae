"""Subsampling strategies on dask data: the map-reduce builds of the ones that allow it.

``uniform``, ``control_variates``, ``preferential`` (plain or ``"cv"`` correction),
``preferential_cv`` and ``full`` are built here from the same pieces as in memory: the in-memory
index draws (:mod:`._index`), the same correction terms (the control-variate anchor gradient is
one map-reduce pass; the anchor responses are evaluated on the gathered rows instead of stored),
and, for the preferential strategies, the same weights computed blockwise and kept on the workers.
The others need the rows in one place (k-means strata, compression) or per-step row sets the
blocks cannot pre-draw (adaptive sizes, SVRG anchors, EWSG candidates), and raise a ValueError
naming the ones that work.
"""

import dask.array as da
import numpy as np

from ..models import Posterior
from ..preprocessing import Anchor
from ..preprocessing import row_scores, score_evals_per_row
from ..subsampling import ExactGradient, GradientEstimator, StrategyData, UniformIndex
from ..subsampling._corrections import ControlVariate, MinibatchSum, ModeAnchor
from ._index import DaskIndex, WeightTargets

__all__ = ["DASK_STRATEGIES", "GATHER_BYTES", "DaskStrategy", "dask_strategy"]

GATHER_BYTES = 1 << 23  # bytes of minibatch rows gathered at once (a piece of steps, >= 1 step)


class _Responses:
    """Stands in for the stored anchor responses: ``responses[batch]`` is ``batch.r``."""

    def __getitem__(self, batch):
        return batch.r


class DaskModeAnchor(ModeAnchor):
    """Control variates at the mode: ``G`` of the :class:`~skbayes_sg.preprocessing.Anchor`,
    responses gathered with the rows and evaluated where ``G`` was."""

    def __init__(self, posterior, anchor):
        super().__init__(posterior, Anchor(anchor.G, None, anchor.point))
        if posterior.model.is_glm:
            self.responses, self.per_row = _Responses(), 1


def _anchor(posterior, laplace, correction, anchor):
    """``(anchor or None, n_grad_evals)``: control variates' ``G`` at the mode (the mode
    search's, or one map-reduce pass), nothing for plain sums."""
    if not isinstance(correction, ControlVariate):
        return None, 0
    if anchor is not None:
        return anchor, 0
    mode = laplace.mode
    G = posterior.row_sum(posterior.model.grad_sum, mode[None, :])[0]
    return Anchor(G, None, mode), posterior.n_rows


def _terms(posterior, anchor):
    """``(terms, what the gathers evaluate)``: plain sums or control variates at ``anchor``."""
    if anchor is None:
        return MinibatchSum(posterior.model), None
    terms = DaskModeAnchor(posterior, anchor)
    if not posterior.model.is_glm:
        return terms, None
    return terms, (posterior.model, terms.mode, _compute_dtype(posterior) or np.float64)


def _compute_dtype(posterior):
    """float32 minibatch arithmetic for float32 X, as in memory (``minibatch_dtype``)."""
    return np.float32 if posterior.X.dtype == np.float32 else None


def _estimator(data, index, terms):
    est = GradientEstimator(data.posterior, index, terms, **data.estimator_kwargs())
    est.compute_dtype = _compute_dtype(data.posterior)
    return est


def _uniform_data(strategy, posterior, laplace, rng, anchor):
    anchor, evals = _anchor(posterior, laplace, strategy._correction(), anchor)
    return StrategyData(posterior, laplace, terms=anchor, n_grad_evals=evals)


def _uniform(data, batch_size, gather_rows):
    terms, at = _terms(data.posterior, data.terms)
    index = DaskIndex(data.posterior.source, UniformIndex(data.posterior.n_rows, batch_size), at,
                      gather_rows=gather_rows)
    return _estimator(data, index, terms)


def _scores(X, y, model, prior, laplace, kind, rng):
    """Worker side: the unnormalised preference scores of one chunk's rows (as in memory; every
    chunk gets a copy of ``rng``: the same Laplace draws as the in-memory pass)."""
    block = Posterior(model, prior, np.asarray(X), np.asarray(y))
    s = row_scores(block, laplace, kind, rng)[0]
    return np.where(np.isfinite(s) & (s > 0), s, 0.0)


def _weights(posterior, laplace, kind, uniform_mix, rng):
    """Persisted ``p`` (as :func:`~skbayes_sg.preprocessing.mix_uniform`) and its per-chunk
    cumulative sums, chunked like the rows; ``(p, cdf, n_grad_evals)``."""
    X, y, n = posterior.X, posterior.y, posterior.n_rows
    s = da.blockwise(_scores, "i", X, "ij", y, "i", posterior.model, None, posterior.prior,
                     None, laplace, None, kind, None, rng, None, concatenate=True,
                     dtype=np.float64).persist()
    total = float(s.sum().compute())
    p = (s * ((1.0 - uniform_mix) / total) + uniform_mix / n) if total > 0 else da.full_like(
        s, 1.0 / n)
    p = (p / float(p.sum().compute())).persist()
    cdf = p.map_blocks(np.cumsum, dtype=np.float64).persist()
    evals = score_evals_per_row(posterior.model, kind) * n
    return p, cdf, evals


def _preferential_data(strategy, posterior, laplace, rng, anchor):
    correction = strategy._correction()
    kind = "curvature" if correction.uses_anchor else "gradient_norm"
    mix = float(strategy.uniform_mix)
    p, cdf, evals = _weights(posterior, laplace, kind, mix, rng)
    anchor, more = _anchor(posterior, laplace, correction, anchor)
    outputs = {"preferential_weights": kind, "preferential_uniform_mix": mix,
               "preferential_max_weight_ratio": float(p.max().compute()) * posterior.n_rows}
    return StrategyData(posterior, laplace, terms=anchor,
                        index=posterior.source.with_weights(p, cdf), n_grad_evals=evals + more,
                        outputs=outputs)


def _preferential(data, batch_size, gather_rows):
    source, n = data.index, data.posterior.n_rows
    terms, at = _terms(data.posterior, data.terms)
    index = DaskIndex(source, WeightTargets(n, batch_size, source.weights[4]), at,
                      gather_rows=gather_rows)
    return _estimator(data, index, terms)


def _full_data(strategy, posterior, laplace, rng, anchor):
    return StrategyData(posterior, laplace)


def _full(data, batch_size, gather_rows):
    return ExactGradient(data.posterior)


# strategy name -> (preprocessing, estimator); the correction must be plain or control variates
DASK_STRATEGIES = {"uniform": (_uniform_data, _uniform),
                   "control_variates": (_uniform_data, _uniform),
                   "preferential": (_preferential_data, _preferential),
                   "preferential_cv": (_preferential_data, _preferential),
                   "full": (_full_data, _full)}


class DaskStrategy:
    """What the fit engine needs of a strategy (``preprocess``, ``estimator``,
    ``max_batch_size``), on dask data.  Make it with :func:`dask_strategy`."""

    def __init__(self, strategy, gather_bytes=GATHER_BYTES):
        self.strategy, self.gather_bytes = strategy, int(gather_bytes)
        self.exact, self.name = strategy.exact, strategy.name

    def preprocess(self, posterior, laplace, *, rng, anchor=None):
        """The strategy's data (see the module docstring)."""
        prepare = DASK_STRATEGIES[self.strategy.name][0]
        return prepare(self.strategy, posterior, laplace, rng, anchor)

    def estimator(self, data, *, batch_size):
        """The gradient estimator (see the module docstring)."""
        X = data.posterior.X
        rows = max(1, self.gather_bytes // (X.shape[1] * X.dtype.itemsize))
        return DASK_STRATEGIES[self.strategy.name][1](data, batch_size, rows)

    def build(self, posterior, laplace, *, batch_size, rng, anchor=None):
        """:meth:`preprocess`, then :meth:`estimator`."""
        data = self.preprocess(posterior, laplace, rng=rng, anchor=anchor)
        return self.estimator(data, batch_size=batch_size)

    def max_batch_size(self, n_rows):
        return self.strategy.max_batch_size(n_rows)

    @property
    def n_candidates(self):
        return self.strategy.n_candidates

    @property
    def anchors_at_mode(self):
        return self.strategy.anchors_at_mode


def dask_strategy(strategy, gather_bytes=None):
    """A :class:`DaskStrategy`, or a ValueError naming the strategies that work on dask data."""
    correction = getattr(strategy, "_correction", lambda: ControlVariate())()
    if strategy.name not in DASK_STRATEGIES or getattr(correction, "name", "cv") not in (
            "plain", "cv"):
        raise ValueError(
            f"subsampling={strategy!r} cannot run on dask input: its preprocessing needs the "
            "rows in one place or its row sets cannot be drawn ahead in blocks. On dask arrays "
            f"use subsampling in {sorted(DASK_STRATEGIES)} (the default 'auto' and "
            "'preferential_cv' work), with a plain or 'cv' correction, or fit in-memory data.")
    if getattr(strategy, "shared_minibatch", False):
        raise ValueError(
            f"subsampling={strategy!r}: shared_minibatch=True is not available on dask input "
            "(its rows are gathered per chain); use shared_minibatch=False or in-memory data.")
    return DaskStrategy(strategy, GATHER_BYTES if gather_bytes is None else gather_bytes)
