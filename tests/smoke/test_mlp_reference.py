"""bench_mlp_reference.py's pieces: its JAX potential is the library's, and its metrics.

The script itself runs in ``--quick`` mode in ``test_benchmarks.py``.
"""

from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def mods(monkeypatch):
    pytest.importorskip("numpyro")
    monkeypatch.syspath_prepend(str(BENCH))
    import _common
    import _mlp_ref_eval
    import _mlp_reference

    _common.jax_versions(("numpyro",), "{exc}")  # float64 in JAX
    return _mlp_reference, _mlp_ref_eval


def test_potential_is_the_library_one(mods):
    """Value differences and gradients match ``model_.nll + prior_`` on every problem, for the
    library's prior and a fan-in one; a changed bias prior or a mislabelled prior is caught."""
    ref, ev = mods
    for name, make in ev.PROBLEMS.items():
        problem = make(True, None)
        U = ref.potential(problem)
        err, same = ref.check_potential(problem, U)
        assert err < 1e-10 and same, name
        fanin = ref.RefProblem(**{**problem.__dict__, "prior": "fanin"})
        err, same = ref.check_potential(fanin, ref.potential(fanin))
        assert err < 1e-10 and not same, name
        bias = problem.units[1] * problem.units[0]  # the first hidden bias: sd 10
        wrong = lambda t: U(t) + 0.5 * t[bias] ** 2 * 0.03  # noqa: E731  sd 10 -> 5
        with pytest.raises(RuntimeError, match="differs"):
            ref.check_potential(problem, wrong)


def test_library_prior_mismatch_raises(mods, monkeypatch):
    ref, ev = mods
    monkeypatch.setitem(ref.PRIORS, "library", ref._fanin_sds)
    with pytest.raises(RuntimeError, match="no longer"):
        ref.check_potential(ev.PROBLEMS["moons"](True, None), lambda t: 0.0)


def test_metrics_on_hand_made_predictives(mods):
    _, ev = mods
    ref = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])
    proba = np.array([[0.7, 0.3], [0.2, 0.8], [0.3, 0.7], [0.5, 0.5]])
    m = ev.classification_metrics(proba, np.array([0, 1, 1, 0]), ref)
    assert m["agreement"] == pytest.approx(0.75)
    assert m["tv"] == pytest.approx((0.2 + 0 + 0.3 + 0) / 4)
    assert m["accuracy"] == pytest.approx(1.0)  # row 3's tie goes to class 0
    assert m["nll"] == pytest.approx(-np.mean(np.log([0.7, 0.8, 0.7, 0.5])))
    # confidences 0.7, 0.8, 0.7, 0.5 in bins 10, 12, 10, 7 (of 15): |0.7-1|*2, |0.8-1|, |0.5-1|
    assert m["ece"] == pytest.approx((2 * 0.3 + 0.2 + 0.5) / 4)
    gauss = {"mean": np.zeros(3), "sd": np.ones(3)}
    r = ev.regression_metrics(np.array([0.0, 3.0, 0.0]), np.array([1.0, 1.0, 2.0]),
                              np.zeros(3), gauss)
    assert r["w2"] == pytest.approx((0 + 3 + 1) / 3)
    assert r["mean_shift"] == pytest.approx(1.0) and r["sd_ratio"] == pytest.approx(1.0)
    # TV: 0; a 3-sd shift, 2 Phi(1.5) - 1; sd 2 against 1, 2 (Phi(c) - Phi(c / 2)) where the
    # densities cross at c = sqrt(8 ln 2 / 3)
    from scipy.stats import norm

    c = np.sqrt(8 * np.log(2) / 3)
    tv = [0.0, 2 * norm.cdf(1.5) - 1, 2 * (norm.cdf(c) - norm.cdf(c / 2))]
    assert r["tv"] == pytest.approx(np.mean(tv), abs=1e-6)
