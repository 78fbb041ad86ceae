"""The child process of bench_scale.py: generate one design, fit one estimator, measure.

Runs in a fresh interpreter per fit so that ``ru_maxrss`` (peak RSS) is that fit's alone.
"""

import json
import os
import time

import numpy as np

from _common import peak_rss_mib
from _synthetic import N_TEST, make_data, truth

RADIUS = 0.05  # Compressed(radius=...) on the clustered design
PHASES = ("mode", "laplace", "curvature", "strategy", "tuning", "starts")


def pass_seconds(X, repeats=5):
    """Best time of one pass over ``X`` (``X.sum()``): the memory-bandwidth floor of a pass."""
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        X.sum()
        best = min(best, time.perf_counter() - t0)
    return best


def phases(diagnostics):
    """Seconds and passes per preprocessing phase, from the fit's own record
    (``diagnostics_["phases"]``)."""
    ph = diagnostics["phases"]
    return {k: [ph[k]["seconds"], ph[k]["data_passes"]] for k in PHASES}


def fit_sklearn(X, y):
    """scikit-learn's ``LogisticRegression()`` (defaults) on the same rows, for reference."""
    from sklearn.linear_model import LogisticRegression

    t0 = time.perf_counter()
    est = LogisticRegression().fit(X, y)
    return est, time.perf_counter() - t0


def child(spec):
    """Generate the data, fit one estimator, print one JSON line of measurements."""
    from threadpoolctl import threadpool_limits
    from skbayes_sg import BayesianLogisticRegression
    from skbayes_sg.subsampling import Compressed, ControlVariates

    n, strategy, design = spec["n"], spec["strategy"], spec["design"]
    t0 = time.perf_counter()
    X, y = make_data(n, design, seed=1)
    Xt, yt = make_data(N_TEST, design, seed=2)
    gen_s, base = time.perf_counter() - t0, peak_rss_mib()
    with threadpool_limits(1):
        pass_s = pass_seconds(X)
    w, b = truth()
    out = {"data_seconds": gen_s, "x_mib": X.nbytes / 2**20, "baseline_rss_mib": base,
           "pass_seconds": pass_s, "bandwidth_gbs": X.nbytes / pass_s / 1e9,
           "load_before": os.getloadavg()[0],
           "bayes_accuracy": float(np.mean((Xt @ w + b > 0) == yt)),
           "dtype_after_validate": str(np.asarray(X).dtype)}
    if strategy == "sklearn":
        with threadpool_limits(1):
            est, fit_s = fit_sklearn(X, y)
        coef = est.coef_.ravel()
        out.update(fit_seconds=fit_s, peak_rss_mib=peak_rss_mib(), n_iter=int(est.n_iter_[0]))
    else:
        sub = {("compressed", "clustered"): Compressed(radius=RADIUS),
               ("cv_shared", "gaussian"): ControlVariates(shared_minibatch=True),
               ("default", "gaussian"): None}.get((strategy, design), strategy)
        kw = {} if sub is None else {"subsampling": sub}
        est = BayesianLogisticRegression(n_jobs=1, random_state=0, **kw, **spec["fit"])
        t0 = time.perf_counter()
        with threadpool_limits(1):
            est.fit(X, y)
        fit_s, d = time.perf_counter() - t0, est.diagnostics_
        prep_passes = est.preprocessing_["preprocessing_grad_evals"] / n
        coef = est.coef_.ravel()
        out.update({
            "fit_seconds": fit_s, "peak_rss_mib": peak_rss_mib(),
            "preprocessing_seconds": d["preprocessing_seconds"],
            "sampling_seconds": d["sampling_seconds"], "data_passes": d["data_passes"],
            "preprocessing_passes": prep_passes, "batch_size": d["batch_size"],
            "subsampling_run": d.get("subsampling"),
            "n_grad_evals": d["n_grad_evals"],
            "floor_seconds": d["data_passes"] * pass_s,
            "phases": phases(d),
            "intercept": float(np.ravel(est.intercept_)[0]),
            "max_rhat": float(np.nanmax(d["rhat"])), "min_ess": float(np.nanmin(d["ess"])),
            "compression_ratio": est.preprocessing_.get("compression_ratio"),
            "compression_radius": est.preprocessing_.get("compression_radius")})
    out.update(fit_extra_mib=out["peak_rss_mib"] - base, accuracy=float(est.score(Xt, yt)),
               coef_rel_error=float(np.linalg.norm(coef - w) / np.linalg.norm(w)),
               load_after=os.getloadavg()[0])
    print("RESULT " + json.dumps(out, default=float), flush=True)
