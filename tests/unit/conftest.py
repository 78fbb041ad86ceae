"""Fixtures shared by the unit tests of several rooms."""

import pytest

from support.problems import make_problem


@pytest.fixture
def heavy_problem():
    """``heavy_problem(name, n=200, weighted=False, mode="random")``: rows of uneven norm."""
    def make(name, n=200, weighted=False, mode="random"):
        return make_problem(name, n=n, weighted=weighted, layout="heavy", mode=mode)
    return make


@pytest.fixture
def blobs_problem():
    """``blobs_problem(name, n=200, weighted=False)``: two blobs of rows, so strata differ."""
    def make(name, n=200, weighted=False):
        return make_problem(name, n=n, weighted=weighted, layout="blobs")
    return make


@pytest.fixture
def no_data_pass(monkeypatch):
    """Make the first pass over the data (the mode search) fail the test."""
    from skbayes_sg.fitting import _prepare

    def find_mode(*args, **kwargs):
        raise AssertionError("the mode search ran before the parameters were checked")

    monkeypatch.setattr(_prepare, "find_mode", find_mode)
