"""Per-step speed of the sampling loop against careful numpy loops and BlackJAX.

Three problems, SGLD at a fixed step, minibatches of 100, microseconds per step *per chain*:

* binary logistic regression, N = 200,000 x 50 (synthetic);
* softmax regression, 10 classes, N = 200,000 x 50 (synthetic);
* MLP 784-100-10 (ReLU) on MNIST's 60,000 training rows (``--data-dir`` / ``SKBAYES_SG_DATA``
  with ``mnist.npz``; otherwise uniform noise of the same shape).

Implementations, all in one run and interleaved round-robin (``--repeats`` rounds, medians):

* ``numpy``: a careful hand loop -- random numbers and indices drawn in blocks, parameters
  updated in place, one BLAS thread (float64 and float32 state and data);
* ``numpy, 4 chains, shared minibatch``: four logistic chains stacked as a ``(4, p)`` array on
  one gathered minibatch per step (their gradient noise is then correlated across chains);
* ``skbayes_sg``: ``diagnostics_["sampling_seconds"]`` of a ``fit`` (``subsampling="uniform"``,
  no preconditioner unless stated), with float64 or float32 ``X``, 1 or 4 chains, and 4 chains
  sharing one minibatch (``Uniform(shared_minibatch=True)``; bench_shared.py measures what that
  does to the statistics);
* ``blackjax``: ``blackjax.sgld`` in ``jax.lax.scan`` under ``jax.jit`` (compiled before the
  timed run; default XLA threading), float64 and float32, when jax and blackjax are installed.

The 1-minute load average is recorded before and after every timed run: on a busy machine every
figure slows down, so compare ratios within one run.

    python benchmarks/bench_step.py [--quick] [--repeats 3] [--json PATH] [--markdown PATH]

The full run takes a few minutes (each library row is a whole ``fit``, preprocessing included,
though only ``sampling_seconds`` is reported; the MLP's mode search dominates).  ``--quick`` is a
smoke run (a few hundred steps: fixed per-fit costs dominate, so its ratios mean nothing) with
BlackJAX on the binary problem only.
"""

import os
import numpy as np
from scipy.special import expit
from threadpoolctl import threadpool_limits

from _common import cli, header, jax_versions, quiet_fit, write_json, write_markdown
from _data import mnist_pixels
from _step_loops import B, blackjax_runner, numpy_glm, numpy_mlp
from skbayes_sg import BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.subsampling import Uniform

LOADS = []


def logistic_data(N, d, K, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, d))
    if K == 2:
        return X, (rng.random(N) < expit(X @ rng.normal(size=d) / np.sqrt(d))).astype(int)
    return X, (X @ rng.normal(size=(d, K)) / np.sqrt(d) + rng.gumbel(size=(N, K))).argmax(1)


def mnist_data(N):
    X, y, _, _, found = mnist_pixels(N, 0)
    return X, y, "mnist" if found else "uniform noise (no mnist.npz)"


def timed(fn):
    """Seconds of ``fn()`` (which returns its own seconds) with the load before and after."""
    LOADS.append(os.getloadavg()[0])
    seconds = fn()
    LOADS.append(os.getloadavg()[0])
    return seconds


def blackjax_available():
    return jax_versions(("blackjax",), "[bench_step] BlackJAX rows skipped: {exc} "
                        "(pip install '.[bench]')") is not None


def library(make, X, y):
    """``sampling_seconds`` of a fit that runs exactly the requested steps (no extension)."""
    def go():
        est = make()
        if "max_doublings" in est.get_params():
            est.set_params(max_doublings=0)
        quiet_fit(est, X, y)  # fixed tiny steps: convergence warnings expected
        return est.diagnostics_["sampling_seconds"]
    return go


def glm_runners(K, n_steps, N, bj):
    X, y = logistic_data(N, 50, K)
    X32, h = X.astype(np.float32), 1e-5
    base = dict(sampler="sgld", subsampling="uniform", step_size=h, batch_size=B, n_warmup=0,
                n_draws=n_steps, random_state=0)

    def lib(**kw):
        return lambda: BayesianLogisticRegression(**{**base, "preconditioner": None, **kw})

    runs = {
        ("numpy f64", 1): lambda: numpy_glm(X, y, K, h, n_steps),
        ("numpy f32", 1): lambda: numpy_glm(X32, y, K, h, n_steps),
        ("numpy f64, 4 chains sharing one minibatch", 4):
            lambda: numpy_glm(X, y, K, h, n_steps, n_chains=4),
        ("numpy f32, 4 chains sharing one minibatch", 4):
            lambda: numpy_glm(X32, y, K, h, n_steps, n_chains=4),
        ("skbayes_sg f64", 1): library(lib(n_chains=1), X, y),
        ("skbayes_sg f32", 1): library(lib(n_chains=1), X32, y),
        ("skbayes_sg f64, default preconditioner", 1):
            library(lib(n_chains=1, preconditioner="auto"), X, y),
        ("skbayes_sg f64, 4 chains", 4): library(lib(n_chains=4), X, y),
        ("skbayes_sg f32, 4 chains", 4): library(lib(n_chains=4), X32, y),
        ("skbayes_sg f64, 4 chains sharing one minibatch", 4):
            library(lib(n_chains=4, subsampling=Uniform(shared_minibatch=True)), X, y),
        ("skbayes_sg f32, 4 chains sharing one minibatch", 4):
            library(lib(n_chains=4, subsampling=Uniform(shared_minibatch=True)), X32, y),
    }
    if bj:
        runs[("blackjax f64", 1)] = blackjax_runner(X, y, K, h, n_steps, np.float64)
        runs[("blackjax f32", 1)] = blackjax_runner(X, y, K, h, n_steps, np.float32)
    return runs


def mlp_runners(n_steps, N, bj):
    X, y, source = mnist_data(N)
    X32, h, thin = X.astype(np.float32), 1e-6, min(100, n_steps)

    def lib(Xd):
        make = lambda: BayesianMLPClassifier(  # noqa: E731
            sampler="sgld", subsampling="uniform", step_size=h, batch_size=B,
            preconditioner=None, n_warmup=0, n_draws=n_steps // thin, thin=thin, n_chains=1,
            random_state=0)
        return library(make, Xd, y)

    runs = {("numpy f64", 1): lambda: numpy_mlp(X, y, h, n_steps),
            ("numpy f32", 1): lambda: numpy_mlp(X32, y, h, n_steps),
            ("skbayes_sg f64", 1): lib(X), ("skbayes_sg f32", 1): lib(X32)}
    if bj:
        runs[("blackjax f64", 1)] = blackjax_runner(X, y, 10, h, n_steps, np.float64, mlp=True)
        runs[("blackjax f32", 1)] = blackjax_runner(X, y, 10, h, n_steps, np.float32, mlp=True)
    return runs, source


def measure(runs, n_steps, repeats):
    """Round-robin ``repeats`` rounds; median µs per step per chain of each run."""
    seconds = {key: [] for key in runs}
    with threadpool_limits(1, user_api="blas"):
        for _ in range(repeats):
            for key, fn in runs.items():
                seconds[key].append(timed(fn))
    return {key: 1e6 * float(np.median(s)) / n_steps / key[1] for key, s in seconds.items()}


def table(title, us, ref):
    lines = [f"### {title}", "", f"| implementation | chains | µs / step / chain | vs {ref} |",
             "|---|---|---|---|"]
    base = next((v for (name, _), v in us.items() if name == ref), None)
    for (name, C), v in us.items():
        ratio = f"{v / base:.2f}" if base else "-"
        lines.append(f"| {name} | {C} | {v:.1f} | {ratio} |")
    return "\n".join(lines) + "\n"


def targets(results):
    """The issue's targets as ratios (per chain): <= 1, <= 0.8 and <= 1 pass."""
    rows = [("logistic", "skbayes_sg f64 (1 chains)", "blackjax f64 (1 chains)", 1.0),
            ("logistic", "skbayes_sg f64, 4 chains (4 chains)", "blackjax f64 (1 chains)", 0.8),
            ("softmax", "skbayes_sg f64 (1 chains)", "blackjax f64 (1 chains)", 1.0),
            ("mlp", "skbayes_sg f32 (1 chains)", "blackjax f32 (1 chains)", 1.0)]
    lines = ["### Targets (per chain)", "", "| problem | ratio | value | target |", "|---|---|---|---|"]
    for key, ours, ref, bound in rows:
        if ref in results[key]:
            r = results[key][ours] / results[key][ref]
            lines.append(f"| {key} | {ours} / {ref} | {r:.2f} | <= {bound} "
                         f"({'met' if r <= bound else 'missed'}) |")
    return "\n".join(lines) + "\n"


def main():
    args = cli(__doc__, repeats={"type": int, "default": 3})
    if args.data_dir:
        os.environ["SKBAYES_SG_DATA"] = args.data_dir
    bj = blackjax_available()
    n_glm, N_glm = (300, 20_000) if args.quick else (20_000, 200_000)
    n_mlp, N_mlp = (50, 2_000) if args.quick else (2_000, 60_000)
    repeats = 1 if args.quick else args.repeats
    results, text = {}, [header("Per-step speed of the sampling loop", args, seeds="0",
                                repeats=f"{repeats} round-robin rounds, medians")]
    quick_bj = bj and not args.quick  # quick: BlackJAX on the binary problem only (compiles)
    for key, K, title in [("logistic", 2, "Binary logistic SGLD"),
                          ("softmax", 10, "Softmax (10 classes) SGLD")]:
        with_bj = bj if K == 2 else quick_bj
        us = measure(glm_runners(K, n_glm, N_glm, with_bj), n_glm, repeats)
        results[key] = {f"{n} ({c} chains)": v for (n, c), v in us.items()}
        text.append(table(f"{title}, N={N_glm:,} x 50, b={B}, {n_glm:,} steps", us,
                          "blackjax f64" if with_bj else "numpy f64"))
    runs, source = mlp_runners(n_mlp, N_mlp, quick_bj)
    us = measure(runs, n_mlp, repeats)
    results["mlp"] = {f"{n} ({c} chains)": v for (n, c), v in us.items()}
    text.append(table(f"MLP 784-100-10 SGLD ({source}), N={N_mlp:,}, b={B}, {n_mlp:,} steps",
                      us, "blackjax f32" if quick_bj else "numpy f32"))
    load = f"1-minute load average during the timed runs: {min(LOADS):.2f}-{max(LOADS):.2f} " \
           f"(mean {np.mean(LOADS):.2f}) on {os.cpu_count()} CPUs.\n"
    out = "\n".join(text) + "\n" + targets(results) + "\n" + load
    print(out)
    write_markdown(args.markdown, out)
    write_json(args.json, {"us_per_step_per_chain": results, "load": LOADS,
                           "steps": {"glm": n_glm, "mlp": n_mlp}, "repeats": repeats})


if __name__ == "__main__":
    main()
