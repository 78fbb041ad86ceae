"""Row sources: a new place for rows plugs in without touching a strategy.

Oracles: the in-memory estimators' estimates (bitwise, from the same streams) and the registry of
strategies (which ones a row source that offers nothing must name).
"""

from dataclasses import dataclass, field

import numpy as np
import pytest

from skbayes_sg.fitting import check_combination
from skbayes_sg.models import Posterior
from skbayes_sg.samplers import SGLD
from skbayes_sg.subsampling import (SUBSAMPLING, ControlVariates, InMemoryRows, Preferential,
                                    Uniform, rows_of)

from support.problems import estimates, make_problem


class _Counted:
    """An index sampler that logs its draws (as a row source elsewhere would gather them)."""

    ragged = False

    def __init__(self, inner, log):
        self.inner, self.log = inner, log
        self.b, self.scale = inner.b, inner.scale

    def init(self, rngs, n_chains):
        return self.inner.init(rngs, n_chains)

    def draw(self, rngs, theta, state):
        idx, w, state = self.inner.draw(rngs, theta, state)
        self.log.append(np.asarray(idx).copy())
        return idx, w, state


class CountingRows(InMemoryRows):
    """A row source that offers none of the capabilities, and gathers through a log."""

    kind = "counting"
    offers = frozenset()

    def gather(self, index, responses_at=None):
        return _Counted(index, self.posterior.log)


@dataclass(frozen=True, eq=False)
class CountingPosterior(Posterior):
    log: list = field(default_factory=list)

    def row_source(self, in_memory):
        return CountingRows(self)


def test_a_row_source_offering_nothing_names_what_runs_there():
    works = ["control_variates", "full", "preferential", "preferential_cv", "uniform"]
    for name in ("stratified", "compressed", "adaptive", "ewsg", "svrg"):
        with pytest.raises(ValueError, match="cannot run on counting input") as err:
            check_combination(SGLD(), SUBSAMPLING[name](), CountingRows)
        assert str(works) in str(err.value) and "'plain' or 'cv' correction" in str(err.value)
    with pytest.raises(ValueError, match="its row sets cannot be drawn ahead"):
        check_combination(SGLD(), Preferential(correction="svrg"), CountingRows)
    with pytest.raises(ValueError, match="shared_minibatch=True is not available on counting"):
        check_combination(SGLD(), Uniform(shared_minibatch=True), CountingRows)
    for name in works:
        check_combination(SGLD(), SUBSAMPLING[name](), CountingRows)
    assert all(s().row_needs() <= InMemoryRows.offers for s in SUBSAMPLING.values())


@pytest.mark.parametrize("name", ["uniform", "control_variates", "preferential",
                                  "preferential_cv"])
def test_strategies_run_unchanged_on_a_new_row_source(name):
    posterior, laplace, _ = make_problem("binary", n=300)
    other = CountingPosterior(posterior.model, posterior.prior, posterior.X, posterior.y)
    assert isinstance(rows_of(other), CountingRows) and type(rows_of(posterior)) is InMemoryRows
    theta = laplace.mode + 0.05 * np.random.default_rng(1).standard_normal((3, laplace.mode.size))
    out = []
    for post in (posterior, other):
        est = SUBSAMPLING[name]().build(post, laplace, batch_size=20,
                                        rng=np.random.default_rng(2))
        out.append(estimates(est, theta, 6)[0])
    np.testing.assert_array_equal(out[1], out[0])
    assert len(other.log) == 6 and other.log[0].shape == (3, 20)


def test_control_variates_ask_the_row_source_for_responses():
    posterior, laplace, _ = make_problem("binary", n=200)
    terms = ControlVariates().build(posterior, laplace, batch_size=10,
                                    rng=np.random.default_rng(0)).terms
    assert terms.responses_at is None and terms.responses.shape == (200,)  # stored in memory
