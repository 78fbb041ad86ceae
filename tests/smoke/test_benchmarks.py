"""Every benchmark script runs in ``--quick`` mode and writes its JSON, so none rots.

The scripts run in a subprocess without ``SKBAYES_SG_DATA``: quick mode must
work on a fresh clone (scikit-learn's bundled data stands in for missing
files).  Full-mode numbers live in ``benchmarks/results/``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))


def test_there_are_benchmarks():
    assert "bench_step.py" in SCRIPTS and "gradient_noise.py" in SCRIPTS


@pytest.mark.slow
@pytest.mark.parametrize("name", SCRIPTS)
def test_benchmark_quick(name, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SKBAYES_SG_DATA"}
    env.update(MPLBACKEND="Agg", PYTHONWARNINGS="ignore",
               SKBAYES_SG_FIGURES=str(tmp_path))
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / name), "--quick", "--json", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"{name}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    payload = json.loads(out.read_text())
    assert payload, f"{name} wrote an empty JSON"


def _calibration_modules(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import _calib_problems
    import _calib_report
    import _references

    return _calib_problems, _calib_report, _references


def test_calibration_tolerance_rule(monkeypatch):
    """calibration.py's tolerance and counts, against hand-made fits and iid Gaussian draws."""
    _, report, refs = _calibration_modules(monkeypatch)
    zero = np.zeros(3)
    exact = refs.Reference(["a", "b", "c"], zero, np.ones(3), zero, zero, "exact")
    assert report.score([0.29, 0, 0], [1.0, 0.81, 1.24], exact)["in_tol"]
    for mean, sd in (([0.31, 0, 0], [1, 1, 1]), ([0, 0, 0], [1, 1.26, 1]),
                     ([0, 0, 0], [0.79, 1, 1])):
        assert not report.score(mean, sd, exact)["in_tol"], (mean, sd)
    # a reference with Monte-Carlo error widens both bounds by two of its standard errors
    noisy = refs.Reference(["a", "b", "c"], zero, np.ones(3), np.full(3, 0.05),
                           np.full(3, 0.05), "nuts")
    assert report.score([0.39, 0, 0], [1.0, 0.73, 1.38], noisy)["in_tol"]
    assert not report.score([0.41, 0, 0], [1, 1, 1], noisy)["in_tol"]
    # the reference's own errors from iid draws: sd / sqrt(n) and 1 / sqrt(2 n)
    rng = np.random.default_rng(0)
    draws = rng.normal(2.0, 3.0, size=(4, 2000, 3))
    ref = refs._from_draws(draws, ["a", "b", "c"], "iid", {})
    n = draws.shape[0] * draws.shape[1]
    np.testing.assert_allclose(ref.mean_se, 3.0 / np.sqrt(n), rtol=0.15)
    np.testing.assert_allclose(ref.sd_rse, 1.0 / np.sqrt(2 * n), rtol=0.15)
    fresh = rng.normal(2.0, 3.0, size=(4000, 3))
    assert report.score(fresh.mean(0), fresh.std(0), ref)["in_tol"]
    fits = [{"in_tol": True, "warned": False}, {"in_tol": True, "warned": True},
            {"in_tol": False, "warned": True}, {"in_tol": False, "warned": False},
            {"error": "DivergenceError: ..."}]
    for f in fits[:4]:
        f.update(seconds=1.0, data_passes=1.0, max_z=0.1, max_rhat=1.0, sd_ratio_min=1.0,
                 sd_ratio_max=1.0)
    s = report.summarize_cell(fits)
    assert (s["silent"], s["n_raised"], s["n_false_alarm"]) == (1, 1, 1)
    assert s["flagged_out"] == pytest.approx(2 / 3) and s["false_alarm"] == 0.5


def test_calibration_reference_potential_is_the_library_one(monkeypatch):
    """The reference potential equals the fitted estimator's ``model_.nll + prior_`` (oracle)."""
    problems, _, refs = _calibration_modules(monkeypatch)
    for problem in problems.make_problems(quick=True):
        U, _ = problems.potential(problem)
        est = refs._library_fit(problem)
        y_enc = problems.targets(problem)[0]
        assert refs.check_potential(problem, U, est, y_enc) < 1e-10, problem.name
        # a prior that differs only in the intercept's scale (10 -> 20) is caught
        nw = problem.X.shape[1]
        wrong = lambda t: U(t) - 0.5 * t[nw] ** 2 * (0.01 - 0.0025)  # noqa: E731
        assert refs.check_potential(problem, wrong, est, y_enc) > 1e-6, problem.name


def test_closed_form_softmax_hessian_matches_finite_differences(monkeypatch):
    """``_calib_large.softmax_hessian`` (the 10,000-parameter references' Laplace) against
    central differences of the reference potential's own numerical gradient (oracle)."""
    problems, _, _ = _calibration_modules(monkeypatch)
    import _calib_large

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    problem = problems.Problem("s", "logistic", X, rng.integers(0, 3, 60), "exact")
    U, p = problems.potential(problem)
    theta = 0.5 * rng.normal(size=p)
    eye, h = np.eye(p), 1e-4

    def grad(t):
        return np.array([(U(t + h * e) - U(t - h * e)) / (2 * h) for e in eye])

    numeric = np.array([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h) for e in eye])
    H = _calib_large.softmax_hessian(problem, theta, chunk=7)  # chunks need not divide n
    np.testing.assert_allclose(H, 0.5 * (numeric + numeric.T), atol=1e-5)  # measured 9e-7


def test_mnist_problem_is_skipped_without_its_data(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.delenv("SKBAYES_SG_DATA", raising=False)
    import _calib_large

    assert _calib_large.mnist_problem(str(tmp_path)) is None
