"""Prediction at scale: speed against scikit-learn, bounded memory for the regressor.

* ``predict_proba`` of a fitted ``BayesianLogisticRegression`` on 100,000 x 50 rows, float64 and
  float32, against ``LogisticRegression.predict_proba`` (target: within 10x), at the default
  ``n_predict_draws=100`` and at 200, with BLAS's default threads (ours: one row block per
  thread, scikit-learn: BLAS's own threads) and with both held to one thread;
* ``BayesianMLPClassifier.predict_proba`` (784-100-10) on 10,000 rows, float64 and float32,
  against ``MLPClassifier`` (the same network, one set of weights);
* ``BayesianLinearRegression.predict(X, return_std=True)`` on 10^7 x 50 float32 rows (2 GB):
  extra memory at its peak (``tracemalloc``, numpy allocations) against the size of X (target:
  at most 2x X, in practice a few chunks), and seconds.

Why 100 predictive draws: ``predict_proba`` is a Monte-Carlo average, whose sd is the posterior
sd of the probability over ``sqrt(S_eff)``; evenly spaced draws over all chains are nearly
independent (``S_eff ~ S``), so at 100 draws the Monte-Carlo error is 10% of the posterior spread
(1% of its variance) -- the precision of a posterior mean from 100 effective draws, the standard
``fit`` holds the chains to -- and prediction costs 100 point predictions.  The ``mc/spread``
column measures it: the rms difference between ``predict_proba`` and the average over every
stored draw (4 chains x 1000), over the rms posterior sd of the probability.  A prediction
costs ``S`` times a point estimate's matrix product plus ``S`` exponentials per row, so the
ratio to scikit-learn grows linearly with the draws (compare the 100 and 200 rows).

Medians of 15 repeats after a warm-up, ours and scikit-learn's timed alternately.  Expect about 2 minutes (the fits dominate) and 2.5 GB.

    python benchmarks/bench_predict.py [--quick] [--json PATH] [--markdown PATH]
"""

import time
import tracemalloc
import warnings

import numpy as np
from scipy.special import expit
from _common import cli, header, machine, write_json, write_markdown
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier

FULL = {"rows": 100_000, "reg_rows": 10_000_000, "mlp_rows": 10_000, "repeats": 15,
        "fit": {"random_state": 0}, "hidden": (100,)}
QUICK = {"rows": 2_000, "reg_rows": 50_000, "mlp_rows": 500, "repeats": 2,
         "fit": {"n_warmup": 20, "n_draws": 50, "random_state": 0}, "hidden": (8,)}


def paired_medians(ours, ref, repeats):
    """Median seconds of ``ours`` and ``ref``, timed alternately after one warm-up call each
    (round-robin, so a change of load on the shared machine hits both sides alike)."""
    ours(), ref()
    times = []
    for _ in range(repeats):
        pair = []
        for fn in (ours, ref):
            t = time.perf_counter()
            fn()
            pair.append(time.perf_counter() - t)
        times.append(pair)
    return tuple(float(v) for v in np.median(times, axis=0))


def mc_over_spread(bayes, X):
    """rms(predict_proba - average over every draw) / rms(posterior sd of the probability)."""
    named = bayes.sample_posterior()
    p = expit(named["coef"][:, 0] @ X.T + named["intercept"])  # (all draws, rows)
    err = bayes.predict_proba(X)[:, 1] - p.mean(axis=0)
    return float(np.sqrt(np.mean(err**2) / np.mean(p.var(axis=0))))


def logistic_rows(size, rng):
    X = rng.normal(size=(size["rows"], 50))
    y = (X[:, :5].sum(1) + rng.logistic(size=len(X)) > 0).astype(int)
    bayes = BayesianLogisticRegression(**size["fit"]).fit(X[:20_000], y[:20_000])
    point = LogisticRegression().fit(X[:20_000], y[:20_000])
    rows = []
    for draws, threads in ((100, None), (100, 1), (200, None)):
        bayes.set_params(n_predict_draws=draws)
        mc = mc_over_spread(bayes, X[:2_000])
        for dtype in (np.float64, np.float32):
            Xd = X.astype(dtype)
            with threadpool_limits(threads):
                ours, ref = paired_medians(lambda: bayes.predict_proba(Xd),
                                           lambda: point.predict_proba(Xd), size["repeats"])
            rows.append({"model": "logistic", "dtype": np.dtype(dtype).name, "rows": len(X),
                         "threads": threads or "default", "seconds": ours,
                         "sklearn_seconds": ref, "ratio": ours / ref, "draws": draws,
                         "mc_over_spread": mc})
    return rows


def mlp_rows(size, rng):
    X = rng.normal(size=(size["mlp_rows"], 784))
    y = rng.integers(0, 10, size=len(X))
    bayes = BayesianMLPClassifier(hidden_layer_sizes=size["hidden"], n_warmup=20, n_draws=100,
                                  thin=1, random_state=0).fit(X[:500], y[:500])
    point = MLPClassifier(size["hidden"], max_iter=5, random_state=0).fit(X[:500], y[:500])
    name = "mlp 784-" + "-".join(map(str, size["hidden"])) + "-10"
    rows = []
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        ours, ref = paired_medians(lambda: bayes.predict_proba(Xd),
                                   lambda: point.predict_proba(Xd), size["repeats"])
        rows.append({"model": name, "dtype": np.dtype(dtype).name, "rows": len(X),
                     "threads": "default", "seconds": ours, "sklearn_seconds": ref,
                     "ratio": ours / ref, "draws": bayes.n_predict_draws,
                     "mc_over_spread": None})
    return rows


def regression_memory(size, rng):
    n, d = size["reg_rows"], 50
    w = rng.normal(size=d).astype(np.float32)
    X = np.empty((n, d), dtype=np.float32)
    for s in range(0, n, 1_000_000):
        X[s:s + 1_000_000] = rng.standard_normal((min(1_000_000, n - s), d), dtype=np.float32)
    m = min(n, 100_000)
    y = X[:m] @ w + rng.normal(size=m)
    reg = BayesianLinearRegression(**size["fit"]).fit(X[:m], y)
    tracemalloc.start()
    t = time.perf_counter()
    mean, std = reg.predict(X, return_std=True)
    seconds = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    out_bytes = mean.nbytes + std.nbytes
    return {"rows": n, "x_bytes": X.nbytes, "peak_bytes": peak, "output_bytes": out_bytes,
            "peak_over_x": peak / X.nbytes, "working_bytes": peak - out_bytes,
            "seconds": seconds}


def markdown(rows, reg, args):
    note = ("Prediction only (the fits are small and not timed). `ratio` = our seconds / "
            "scikit-learn's on the same rows; medians of the repeats. `mc/spread`: Monte-Carlo "
            "error of predict_proba over its posterior spread (see the script's docstring; "
            "expected ~1/sqrt(draws)). Regressor memory: the "
            "peak of numpy allocations during `predict(X, return_std=True)` (tracemalloc), "
            "which includes the two float64 outputs (mean and std, 16 bytes per row).")
    lines = [header("Prediction at scale", args, seeds=[0], repeats=args.repeats, note=note), "",
             "| model | X dtype | rows | BLAS threads | predictive draws | mc/spread | seconds "
             "| scikit-learn s | ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        mc = "" if r["mc_over_spread"] is None else f"{r['mc_over_spread']:.3f}"
        lines.append(f"| {r['model']} | {r['dtype']} | {r['rows']:,} | {r['threads']} | "
                     f"{r['draws']} | {mc} | "
                     f"{r['seconds']:.3f} | {r['sklearn_seconds']:.4f} | {r['ratio']:.1f} |")
    gb = 1 << 30
    lines += ["", f"`BayesianLinearRegression.predict(X, return_std=True)` on {reg['rows']:,} x 50 "
              f"float32 rows (X = {reg['x_bytes'] / gb:.2f} GiB): {reg['seconds']:.1f} s, peak "
              f"extra memory {reg['peak_bytes'] / gb:.3f} GiB = {reg['peak_over_x']:.2f} x X "
              f"(outputs {reg['output_bytes'] / gb:.3f} GiB; working memory "
              f"{reg['working_bytes'] / (1 << 20):.0f} MiB, independent of the rows)."]
    return "\n".join(lines) + "\n"


def main():
    args = cli(__doc__)
    size = QUICK if args.quick else FULL
    args.repeats = size["repeats"]
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = logistic_rows(size, rng) + mlp_rows(size, rng)
        reg = regression_memory(size, rng)
    for r in rows:
        print(f"[{r['model']} {r['dtype']} {r['draws']} draws, {r['threads']} threads] "
              f"{r['seconds']:.3f} s vs "
              f"{r['sklearn_seconds']:.4f} s ({r['ratio']:.1f}x)")
    print(f"[regression] peak {reg['peak_over_x']:.2f} x X, {reg['seconds']:.1f} s")
    write_json(args.json, {"machine": machine(), "rows": rows, "regression": reg})
    write_markdown(args.markdown, markdown(rows, reg, args))


if __name__ == "__main__":
    main()
