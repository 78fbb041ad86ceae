"""Prediction at scale: speed against scikit-learn, bounded memory for the regressor.

* ``predict_proba`` of a fitted ``BayesianLogisticRegression`` (200 predictive draws, the
  default ``n_predict_draws``) on 100,000 x 50 rows, float64 and float32, against
  ``LogisticRegression.predict_proba`` (target: within 10x);
* ``BayesianLinearRegression.predict(X, return_std=True)`` on 10^7 x 50 float32 rows (2 GB):
  extra memory at its peak (``tracemalloc``, numpy allocations) against the size of X (target:
  at most 2x X, in practice a few chunks), and seconds;
* the same for ``BayesianMLPClassifier.predict_proba`` (784-100-10) on 10,000 rows against
  ``MLPClassifier``.

Medians of 5 repeats after a warm-up.

    python benchmarks/bench_predict.py [--quick] [--json PATH] [--markdown PATH]
"""

import time
import tracemalloc
import warnings

import numpy as np
from _common import cli, header, machine, write_json, write_markdown
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier

FULL = {"rows": 100_000, "reg_rows": 10_000_000, "mlp_rows": 10_000, "repeats": 5,
        "fit": {"random_state": 0}, "hidden": (100,)}
QUICK = {"rows": 2_000, "reg_rows": 50_000, "mlp_rows": 500, "repeats": 2,
         "fit": {"n_warmup": 20, "n_draws": 50, "random_state": 0}, "hidden": (8,)}


def median_seconds(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def logistic_rows(size, rng):
    X = rng.normal(size=(size["rows"], 50))
    y = (X[:, :5].sum(1) + rng.logistic(size=len(X)) > 0).astype(int)
    bayes = BayesianLogisticRegression(**size["fit"]).fit(X[:20_000], y[:20_000])
    point = LogisticRegression().fit(X[:20_000], y[:20_000])
    rows = []
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        ours = median_seconds(lambda: bayes.predict_proba(Xd), size["repeats"])
        ref = median_seconds(lambda: point.predict_proba(Xd), size["repeats"])
        rows.append({"model": "logistic", "dtype": np.dtype(dtype).name, "rows": len(X),
                     "seconds": ours, "sklearn_seconds": ref, "ratio": ours / ref,
                     "draws": bayes.n_predict_draws})
    return rows


def mlp_rows(size, rng):
    X = rng.normal(size=(size["mlp_rows"], 784)).astype(np.float32)
    y = rng.integers(0, 10, size=len(X))
    bayes = BayesianMLPClassifier(hidden_layer_sizes=size["hidden"], n_warmup=20, n_draws=100, thin=1,
                                  random_state=0).fit(X[:500], y[:500])
    point = MLPClassifier(size["hidden"], max_iter=5, random_state=0).fit(X[:500], y[:500])
    ours = median_seconds(lambda: bayes.predict_proba(X), size["repeats"])
    ref = median_seconds(lambda: point.predict_proba(X), size["repeats"])
    name = "mlp 784-" + "-".join(map(str, size["hidden"])) + "-10"
    return [{"model": name, "dtype": "float32", "rows": len(X), "seconds": ours,
             "sklearn_seconds": ref, "ratio": ours / ref, "draws": bayes.n_predict_draws}]


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
            "scikit-learn's on the same rows; medians of the repeats. Regressor memory: the "
            "peak of numpy allocations during `predict(X, return_std=True)` (tracemalloc), "
            "which includes the two float64 outputs (mean and std, 16 bytes per row).")
    lines = [header("Prediction at scale", args, seeds=[0], repeats=args.repeats, note=note), "",
             "| model | X dtype | rows | predictive draws | seconds | scikit-learn s | ratio |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['dtype']} | {r['rows']:,} | {r['draws']} | "
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
        print(f"[{r['model']} {r['dtype']}] {r['seconds']:.3f} s vs {r['sklearn_seconds']:.4f} s")
    print(f"[regression] peak {reg['peak_over_x']:.2f} x X, {reg['seconds']:.1f} s")
    write_json(args.json, {"machine": machine(), "rows": rows, "regression": reg})
    write_markdown(args.markdown, markdown(rows, reg, args))


if __name__ == "__main__":
    main()
