"""Row sources: where a posterior's rows live, as the strategies see it.

A strategy never asks where the rows are.  It asks the posterior's row source
(:func:`rows_of`) for the few things that differ between places:

* ``gather(index, responses_at=None)`` -- the index sampler whose draws bring their rows (in
  memory: the index itself, the posterior gathers the rows each step; on dask: the rows
  gathered a piece of steps ahead where they live, with the anchor responses at
  ``responses_at`` when given);
* ``responses(anchor)`` -- ``(lookup, point)``: what control variates index with a minibatch for
  the anchor responses ``r_i(theta_hat)`` (the stored array, or None: the terms recompute the
  anchor gradients), and the point at which :meth:`gather` must evaluate them (None: stored);
* ``preference_weights(laplace, kind, uniform_mix, rng, anchor)`` -- the preference weights
  ``p`` of every row kept where the rows live (a chunk map of
  :func:`~skbayes_sg.preprocessing.row_scores`), their cost, the anchor from the same pass
  where the rows allow it, and the outputs for ``preprocessing_``;
* ``weight_table(p)`` and ``weighted_index(table, batch_size)`` -- the persisted table of the
  weighted draws, and the index sampler that draws from it;
* ``compute_dtype`` -- the precision of the minibatch arithmetic (float32 for float32 rows).

And it declares what it offers (``offers``), checked against each strategy's ``row_needs()``
before any pass over the data (:func:`~skbayes_sg.fitting.check_combination`):

* ``"whole"`` -- the preprocessing may read every row in one place (k-means, compression);
* ``"per_step"`` -- row sets chosen step by step from the chains' state (adaptive sizes, SVRG
  anchors, EWSG candidates), which cannot be drawn ahead in blocks;
* ``"shared"`` -- one minibatch read by every chain (``shared_minibatch=True``).

A posterior names its row source with ``posterior.row_source(InMemoryRows)``: an in-memory
:class:`~skbayes_sg.models.Posterior` takes the one offered (the in-memory source is built
from this room's pieces, which the models room below cannot name); a posterior whose rows live
elsewhere (:class:`~skbayes_sg.dask.DaskPosterior`) returns its own.
"""

from types import MappingProxyType

from ..models import minibatch_dtype
from ..preprocessing import row_scores, scores_to_weights
from ._weighted import weight_tables, weighted_index

__all__ = ["ROW_NEEDS", "InMemoryRows", "rows_of"]

#: what each capability of a row source allows, as the error names a missing one
ROW_NEEDS = MappingProxyType({"whole": "its preprocessing needs the rows in one place",
                              "per_step": "its row sets cannot be drawn ahead in blocks",
                              "shared": "its chains share minibatches"})


def rows_of(posterior):
    """The row source of ``posterior``'s rows."""
    return posterior.row_source(InMemoryRows)


class InMemoryRows:
    """Rows in this process: a dense array or a CSR matrix (:class:`~skbayes_sg.models.Posterior`).

    Parameters
    ----------
    posterior : Posterior
    """

    kind = "in-memory"
    offers = frozenset(ROW_NEEDS)

    def __init__(self, posterior):
        self.posterior = posterior

    @property
    def compute_dtype(self):
        """float32 for dense float32 rows, else None (float64)."""
        return minibatch_dtype(self.posterior.X)

    def gather(self, index, responses_at=None):
        """``index`` itself: :meth:`~skbayes_sg.models.Posterior.rows` gathers each step."""
        return index

    def responses(self, anchor):
        """The stored responses of the :class:`~skbayes_sg.preprocessing.Anchor` (None for
        models other than GLMs), evaluated already."""
        return anchor.responses, None

    def preference_weights(self, laplace, kind, uniform_mix, rng, anchor=False):
        """``(p (n_rows,), n_grad_evals, anchor or None, outputs)`` in one pass over the rows
        (the anchor with ``anchor``, where the model's scores give it)."""
        posterior = self.posterior
        scores, evals, found = row_scores(posterior, laplace, kind, rng, anchor=anchor)
        p = scores_to_weights(posterior, scores, uniform_mix)
        return p, evals, found, {"preferential_max_weight_ratio": float(p.max() * p.size),
                                 "subsampling_weights": p}

    def weight_table(self, p):
        """The :class:`~skbayes_sg.subsampling.WeightTables` of ``p``."""
        return weight_tables(p)

    def weighted_index(self, table, batch_size):
        """Draws from ``table`` (every row once from ``batch_size >= n_rows`` on)."""
        return weighted_index(table.p, batch_size, table)
