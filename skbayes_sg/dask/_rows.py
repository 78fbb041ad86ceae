"""The row source of a :class:`~skbayes_sg.dask.DaskPosterior`: rows that live on the cluster.

The strategies ask it what they ask the in-memory one
(:class:`~skbayes_sg.subsampling.InMemoryRows`), and it answers where the rows live:

* gathers -- the in-memory index sampler's draws, their rows gathered a piece of steps ahead
  (:class:`~skbayes_sg.dask.DaskIndex`), at most ``gather_bytes`` of rows at once;
* responses -- control variates' anchor responses are not stored: each gather evaluates them on
  its rows, on the worker, at the anchor (:class:`CarriedResponses` reads them off the batch);
* chunk maps -- :meth:`map_chunks` runs a function of an in-memory
  :class:`~skbayes_sg.models.Posterior` on every chunk where it lives, so the preference
  weights are :func:`~skbayes_sg.preprocessing.row_scores` chunk by chunk, mixed with uniform
  by the in-memory pieces, and kept (with their cumulative sums) on the workers.

It offers none of the capabilities of :data:`~skbayes_sg.subsampling.ROW_NEEDS`: its rows are
never in one place, and each step's rows are drawn ahead in blocks, per chain.
"""

import dask.array as da
import numpy as np

from ..models import Posterior
from ..preprocessing import clean_scores, mix_scores, row_scores, score_evals_per_row
from ._index import DaskIndex, WeightTargets

__all__ = ["CarriedResponses", "DaskRows", "GATHER_BYTES"]

GATHER_BYTES = 1 << 23  # bytes of minibatch rows gathered at once (a piece of steps, >= 1 step)


class CarriedResponses:
    """Stands in for the stored anchor responses: ``responses[batch]`` is ``batch.r``."""

    def __getitem__(self, batch):
        return batch.r


def _on_chunk(X, y, model, prior, fn, *args):
    """Worker side: ``fn(Posterior of one chunk, *args)``."""
    return fn(Posterior(model, prior, np.asarray(X), np.asarray(y)), *args)


def _scores(chunk, laplace, kind, rng):
    """One chunk's preference scores, cleaned (every chunk gets a copy of ``rng``: the same
    Laplace draws as the in-memory pass)."""
    return clean_scores(row_scores(chunk, laplace, kind, rng)[0])


def _mix(block, total, uniform_mix, n_rows):
    return mix_scores(np.array(block, dtype=np.float64), total, uniform_mix, n_rows)


class DaskRows:
    """Rows of a :class:`~skbayes_sg.dask.DaskPosterior`.

    Parameters
    ----------
    posterior : DaskPosterior
    """

    kind = "dask"
    offers = frozenset()
    gather_bytes = GATHER_BYTES

    def __init__(self, posterior):
        self.posterior = posterior

    @property
    def compute_dtype(self):
        """float32 minibatch arithmetic for float32 ``X``, as in memory."""
        return np.float32 if self.posterior.X.dtype == np.float32 else None

    def gather(self, index, responses_at=None):
        """A :class:`DaskIndex` over ``index`` (its weighted rows' source for weighted draws),
        gathering the anchor responses at ``responses_at`` too when given."""
        posterior, X = self.posterior, self.posterior.X
        at = None if responses_at is None else (
            posterior.model, responses_at, self.compute_dtype or np.float64)
        rows = max(1, self.gather_bytes // (X.shape[1] * X.dtype.itemsize))
        source = getattr(index, "source", posterior.source)  # WeightTargets carry their own
        return DaskIndex(source, index, at, gather_rows=rows)

    def responses(self, anchor):
        """GLMs: :class:`CarriedResponses`, evaluated by the gathers at the anchor's point;
        other models recompute the anchor gradients ``(None, None)``."""
        if not self.posterior.model.is_glm:
            return None, None
        return CarriedResponses(), anchor.point

    def map_chunks(self, fn, *args):
        """``fn(chunk posterior, *args)`` of every chunk where it lives: a 1-D dask array with
        one value per row, chunked like the rows."""
        p = self.posterior
        literals = [a for arg in (p.model, p.prior, fn, *args) for a in (arg, None)]
        return da.blockwise(_on_chunk, "i", p.X, "ij", p.y, "i", *literals, concatenate=True,
                            dtype=np.float64)

    def preference_weights(self, laplace, kind, uniform_mix, rng, anchor=False):
        """``(p, n_grad_evals, None, outputs)``: ``p`` persisted on the workers, as
        :func:`~skbayes_sg.preprocessing.mix_uniform` (the anchor comes from its own pass)."""
        n = self.posterior.n_rows
        s = self.map_chunks(_scores, laplace, kind, rng).persist()
        total = float(s.sum().compute())
        p = (s.map_blocks(_mix, total, uniform_mix, n, dtype=np.float64)
             if np.isfinite(total) and total > 0 else da.full_like(s, 1.0 / n))
        p = (p / float(p.sum().compute())).persist()
        evals = score_evals_per_row(self.posterior.model, kind) * n
        return p, evals, None, {"preferential_max_weight_ratio": float(p.max().compute()) * n}

    def weight_table(self, p):
        """The row source drawing by ``p`` (with its per-chunk cumulative sums)."""
        cdf = p.map_blocks(np.cumsum, dtype=np.float64).persist()
        return self.posterior.source.with_weights(p, cdf)

    def weighted_index(self, table, batch_size):
        """Targets on ``table``'s cumulative weights, resolved by the gathers."""
        return WeightTargets(self.posterior.n_rows, batch_size, table.weights[4], source=table)
