"""Speed of the inner loop against minimal hand-written numpy SGLD loops.

Logistic regression: N=200,000 x 50, batch 100, 20,000 SGLD steps, one chain,
fixed step size, ``subsampling="uniform"``.  MLP: 784-100-10 on 60,000 rows
(MNIST when ``--data-dir`` / ``SKBAYES_SG_DATA`` has it, else synthetic data
of the same shape), batch 100.  Both in one run, so the ratios compare like
with like on a shared machine.  The library's figure is
``diagnostics_["sampling_seconds"]``; the whole ``fit`` (preprocessing
included) is reported beside it.

    python benchmarks/bench_step.py [--quick] [--json PATH] [--markdown PATH]
"""

import argparse
import time

import numpy as np
from scipy.special import expit
from threadpoolctl import threadpool_limits

from _common import load_npz, machine, write_json, write_markdown
from skbayes_sg import BayesianLogisticRegression, BayesianMLPClassifier


def logistic_data(N, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d))
    y = (rng.random(N) < expit(X @ rng.normal(size=d) / np.sqrt(d))).astype(int)
    return X, y


def hand_sgld_logistic(X, y, h, b, n_steps, seed=0, blocked=False):
    """Minimal numpy SGLD for logistic regression (prior N(0, 1), intercept)."""
    rng = np.random.default_rng(seed)
    N, d = X.shape
    t = 2.0 * y - 1.0
    w, c = np.zeros(d), 0.0
    scale, sq = N / b, np.sqrt(h)
    if blocked:
        idx_all = rng.integers(0, N, size=(n_steps, b))
        xi_all = rng.standard_normal((n_steps, d + 1))
    start = time.perf_counter()
    for k in range(n_steps):
        idx = idx_all[k] if blocked else rng.integers(0, N, size=b)
        xi = xi_all[k] if blocked else rng.standard_normal(d + 1)
        Xb, tb = X[idx], t[idx]
        r = -tb * expit(-tb * (Xb @ w + c))
        gw = w + scale * (r @ Xb)
        gc = c / 100.0 + scale * r.sum()
        w = w - 0.5 * h * gw + sq * xi[:d]
        c = c - 0.5 * h * gc + sq * xi[d]
    return time.perf_counter() - start


def _relu_mlp_grad(W1, b1, W2, b2, Xb, yb, scale):
    H = np.maximum(Xb @ W1 + b1, 0.0)
    Z = H @ W2 + b2
    Z -= Z.max(1, keepdims=True)
    P = np.exp(Z)
    P /= P.sum(1, keepdims=True)
    P[np.arange(len(yb)), yb] -= 1.0
    dH = (P @ W2.T) * (H > 0)
    return (scale * (Xb.T @ dH) + W1, scale * dH.sum(0) + b1 / 100.0,
            scale * (H.T @ P) + W2, scale * P.sum(0) + b2 / 100.0)


def hand_sgld_mlp(X, y, h, b, n_steps, hidden=100, seed=0):
    """Minimal numpy SGLD for a one-hidden-layer ReLU MLP (prior N(0, 1))."""
    rng = np.random.default_rng(seed)
    N, d = X.shape
    K = int(y.max()) + 1
    params = [rng.normal(size=(d, hidden)) * 0.05, np.zeros(hidden),
              rng.normal(size=(hidden, K)) * 0.05, np.zeros(K)]
    scale, sq = N / b, np.sqrt(h)
    start = time.perf_counter()
    for _ in range(n_steps):
        idx = rng.integers(0, N, size=b)
        grads = _relu_mlp_grad(*params, X[idx], y[idx], scale)
        params = [p - 0.5 * h * g + sq * rng.standard_normal(p.shape)
                  for p, g in zip(params, grads)]
    return time.perf_counter() - start


def library(est, X, y):
    start = time.perf_counter()
    est.fit(X, y)
    total = time.perf_counter() - start
    return est.diagnostics_["sampling_seconds"], total


def bench_logistic(n_steps, N):
    X, y = logistic_data(N, 50)
    h, b = 1e-5, 100
    with threadpool_limits(1, user_api="blas"):
        hand = hand_sgld_logistic(X, y, h, b, n_steps)
        hand_blocked = hand_sgld_logistic(X, y, h, b, n_steps, blocked=True)
    rows = {"hand loop": (hand, hand), "hand loop, pre-drawn blocks": (hand_blocked, hand_blocked)}
    base = dict(sampler="sgld", subsampling="uniform", step_size=h, batch_size=b,
                n_warmup=0, n_draws=n_steps, random_state=0)
    for label, kw in [("library, no preconditioner", dict(preconditioner=None, n_chains=1)),
                      ("library, default preconditioner", dict(n_chains=1)),
                      ("library, 4 chains (per chain)", dict(preconditioner=None, n_chains=4))]:
        s, total = library(BayesianLogisticRegression(**base, **kw), X, y)
        div = kw["n_chains"]
        rows[label] = (s / div, total / div)
    return rows, hand


def bench_mlp(n_steps, N):
    data = load_npz("mnist")
    if data is not None:
        X, y = data["X_train"][:N].astype(np.float64) / 255.0, data["y_train"][:N]
        source = "mnist"
    else:
        rng = np.random.default_rng(0)
        X, y = rng.random((N, 784)), rng.integers(0, 10, N)
        source = "synthetic"
    h, b = 1e-6, 100
    with threadpool_limits(1, user_api="blas"):
        hand = hand_sgld_mlp(X, y, h, b, n_steps)
    rows = {"hand loop": (hand, hand)}
    est = BayesianMLPClassifier(sampler="sgld", subsampling="uniform", step_size=h,
                                batch_size=b, preconditioner=None, n_warmup=0,
                                n_draws=max(n_steps // 100, 1), thin=100, n_chains=1,
                                random_state=0)
    rows["library, no preconditioner"] = library(est, X, y)
    return rows, hand, source


def table(title, rows, hand, n_steps):
    lines = [f"### {title}", "", "| loop | sampling s | µs/step | ratio to hand loop | whole fit s |",
             "|---|---|---|---|---|"]
    for label, (s, total) in rows.items():
        lines.append(f"| {label} | {s:.2f} | {1e6 * s / n_steps:.1f} | {s / hand:.2f} | {total:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--data-dir")
    args = ap.parse_args()
    if args.data_dir:
        import os
        os.environ["SKBAYES_SG_DATA"] = args.data_dir
    n_log, N_log = (500, 20_000) if args.quick else (20_000, 200_000)
    n_mlp, N_mlp = (50, 2_000) if args.quick else (2_000, 60_000)
    log_rows, log_hand = bench_logistic(n_log, N_log)
    mlp_rows, mlp_hand, source = bench_mlp(n_mlp, N_mlp)
    text = (f"## Inner-loop speed ({'quick' if args.quick else 'full'} run)\n\n"
            f"Machine: {machine()}\n\n"
            + table(f"Logistic SGLD, N={N_log:,} x 50, b=100, {n_log:,} steps", log_rows, log_hand, n_log)
            + "\n" + table(f"MLP 784-100-10 SGLD ({source}), N={N_mlp:,}, b=100, {n_mlp:,} steps",
                           mlp_rows, mlp_hand, n_mlp))
    print(text)
    write_markdown(args.markdown, text)
    write_json(args.json, {"machine": machine(), "logistic": log_rows, "mlp": mlp_rows,
                           "steps": {"logistic": n_log, "mlp": n_mlp}})


if __name__ == "__main__":
    main()
