"""Chains sharing one minibatch vs independent minibatches (issue 16: "measure both").

``Uniform``, ``ControlVariates``, ``Preferential(CV)`` and ``Stratified`` take
``shared_minibatch=True``: every chain uses the same rows
in a step (one gather, the chains' parameters stacked against them).  Each chain's estimate has
the same distribution, but the chains' gradient noises become dependent.  Two parts:

* **Statistics** (exact linear posterior, 20,000 x 20 strongly correlated design as in the tests,
  noise fixed, no intercept): for ``uniform``, ``control_variates`` and ``preferential_cv`` (the
  default below 600,000 rows), independent and shared,
  ``--seeds`` fits each at the defaults.  Per cell: max |mean error| and sd-ratio range against
  the exact posterior, max R-hat, min bulk ESS, the correlation of draws across chains (lag 0,
  averaged over chain pairs and coordinates), and the *calibration of the Monte-Carlo error*:
  ``z = (mean - exact) / (sd / sqrt(ESS))`` over all seeds and coordinates, whose sd is 1 when
  the ESS is honest and above 1 when dependent chains make it overstate the information.
* **Speed** (binary logistic, 10^6 x 50 float32 rows as in ``bench_scale.py``, one BLAS
  thread): the default fit (control variates, ABOBA) with independent and with shared
  minibatches, ``--repeats`` alternating fits in one process after a warm-up: fit and sampling
  seconds, microseconds per 4-chain step, and the coefficients' agreement.

    python benchmarks/bench_shared.py [--quick] [--seeds 20] [--repeats 5] [--json PATH]
        [--markdown PATH]
"""

import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from _common import LIBRARY_WARNINGS, cli, header, write_json, write_markdown
from _synthetic import make_data
from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression
from skbayes_sg.subsampling import ControlVariates, PreferentialCV, Uniform

CELLS = {("uniform", False): Uniform(), ("uniform", True): Uniform(shared_minibatch=True),
         ("control_variates", False): ControlVariates(),
         ("control_variates", True): ControlVariates(shared_minibatch=True),
         ("preferential_cv", False): PreferentialCV(),
         ("preferential_cv", True): PreferentialCV(shared_minibatch=True)}


def correlated(n, p=20, seed=20):
    """The tests' correlated design (``correlated_problem``), standardized, with its exact
    posterior ``(X, y, s, mean, cov)``."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(p, p))
    L = np.linalg.cholesky(0.95 * np.ones((p, p)) + 0.05 * np.eye(p))
    X = rng.normal(size=(n, p)) @ L.T + 0.05 * rng.normal(size=(n, p)) @ A.T / np.sqrt(p)
    y = X @ rng.normal(size=p) * 0.3 + rng.normal(size=n) * 3.0
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    s = float(np.sqrt(resid @ resid / (n - p)))
    cov = np.linalg.inv(X.T @ X / s**2 + np.eye(p))
    return X, y, s, cov @ X.T @ y / s**2, cov


def cross_chain_correlation(draws):
    """Mean lag-0 correlation of the draws of different chains ``(C, S, p)``."""
    z = draws - draws.mean(axis=1, keepdims=True)
    z /= z.std(axis=1, keepdims=True)
    C = draws.shape[0]
    pairs = [(a, b) for a in range(C) for b in range(a + 1, C)]
    return float(np.mean([np.mean(z[a] * z[b], axis=0).mean() for a, b in pairs]))


def statistics_fit(strategy, data, seed):
    X, y, s, mean, cov = data
    reg = BayesianLinearRegression(noise_std=s, fit_intercept=False, subsampling=strategy,
                                   random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg.fit(X, y)
    d, draws, sd = reg.diagnostics_, reg.draws_, np.sqrt(np.diag(cov))
    pooled = draws.reshape(-1, draws.shape[-1])
    steps = reg.n_warmup + d["sampling_steps"]
    return {"z": ((pooled.mean(0) - mean) / (sd / np.sqrt(d["ess"]))).tolist(),
            "mean_err": float(np.max(np.abs(pooled.mean(0) - mean) / sd)),
            "sd_ratio_min": float((pooled.std(0) / sd).min()),
            "sd_ratio_max": float((pooled.std(0) / sd).max()),
            "max_rhat": float(np.max(d["rhat"])), "min_ess": float(np.min(d["ess"])),
            "cross_corr": cross_chain_correlation(draws), "batch_size": int(d["batch_size"]),
            "us_per_step": 1e6 * d["sampling_seconds"] / steps,
            "warned": any(issubclass(w.category, LIBRARY_WARNINGS) for w in caught)}


def statistics(args):
    data = correlated(2000 if args.quick else 20_000)
    seeds = range(2 if args.quick else args.seeds)
    out = {}
    for (name, shared), strategy in CELLS.items():
        print(f"[statistics] {name} shared={shared}", flush=True)
        with threadpool_limits(1):
            fits = [statistics_fit(strategy, data, seed) for seed in seeds]
        z = np.concatenate([f["z"] for f in fits])
        out[f"{name}|{shared}"] = {"fits": fits, "z_sd": float(np.std(z, ddof=1)),
                                   **{k: float(np.median([f[k] for f in fits])) for k in (
                                       "mean_err", "max_rhat", "min_ess", "cross_corr",
                                       "us_per_step", "batch_size")},
                                   "sd_ratio_min": min(f["sd_ratio_min"] for f in fits),
                                   "sd_ratio_max": max(f["sd_ratio_max"] for f in fits),
                                   "warned": sum(f["warned"] for f in fits)}
    return out


def speed(args):
    n = 10_000 if args.quick else 1_000_000
    X, y = make_data(n, "gaussian", 1)
    fits = {False: ControlVariates(), True: ControlVariates(shared_minibatch=True)}
    runs, coef = {False: [], True: []}, {}
    with threadpool_limits(1):
        BayesianLogisticRegression(random_state=0).fit(X[:20_000], y[:20_000])  # warm-up
        for _ in range(1 if args.quick else args.repeats):
            for shared, strategy in fits.items():
                t0 = time.perf_counter()
                m = BayesianLogisticRegression(subsampling=strategy, random_state=0).fit(X, y)
                fit_s, d = time.perf_counter() - t0, m.diagnostics_
                steps = m.n_warmup + d["sampling_steps"]
                runs[shared].append({"fit_s": fit_s, "sampling_s": d["sampling_seconds"],
                                     "us_per_step": 1e6 * d["sampling_seconds"] / steps,
                                     "max_rhat": float(np.max(d["rhat"])),
                                     "min_ess": float(np.min(d["ess"])),
                                     "integrator": d["integrator"]})
                coef[shared] = m.draws_.reshape(-1, m.draws_.shape[-1])
    sd = coef[False].std(0)
    return {"n_rows": n, "runs": {str(k): v for k, v in runs.items()},
            "median": {str(k): {key: float(np.median([r[key] for r in v]))
                                for key in ("fit_s", "sampling_s", "us_per_step", "max_rhat",
                                            "min_ess")} for k, v in runs.items()},
            "mean_diff_sd": float(np.max(np.abs(coef[True].mean(0) - coef[False].mean(0)) / sd)),
            "sd_ratio": [float(v) for v in np.quantile(coef[True].std(0) / sd, [0, 1])]}


def markdown(stats, fast, args):
    note = ("Statistics: `BayesianLinearRegression(noise_std=s, fit_intercept=False)` at its "
            "defaults but `subsampling` (batch `auto`, column b), one BLAS thread, "
            f"random_state 0..{args.seeds - 1 if not args.quick else 1}; medians over the seeds "
            "except the sd-ratio range (all seeds) and `warned` (count). `z sd`: the sd of "
            "(posterior-mean error) / (sd / sqrt(bulk ESS)) over all seeds and coordinates, 1 "
            "when the ESS the library reports is honest. `cross-chain corr`: lag-0 correlation "
            "of different chains' draws (0 for independent chains). Speed: the default logistic "
            "fit (control variates, ABOBA) with independent vs shared minibatches, alternating "
            "in one process after a warm-up fit.")
    lines = [header("Shared vs independent minibatches", args, seeds="see below",
                    repeats=args.repeats, note=note),
             "### Statistics (exact linear posterior, correlated design)", "",
             "| subsampling | minibatch | b | max mean err (sd) | sd ratio | max R-hat | min ESS "
             "| cross-chain corr | z sd | warned | µs / step (4 chains) |", "|---" * 11 + "|"]
    for key, r in stats.items():
        name, shared = key.split("|")
        lines.append(f"| {name} | {'shared' if shared == 'True' else 'independent'} | "
                     f"{r['batch_size']:.0f} | {r['mean_err']:.3f} | {r['sd_ratio_min']:.2f}–"
                     f"{r['sd_ratio_max']:.2f} | {r['max_rhat']:.3f} | {r['min_ess']:.0f} | "
                     f"{r['cross_corr']:.3f} | {r['z_sd']:.2f} | {r['warned']} | "
                     f"{r['us_per_step']:.1f} |")
    med = fast["median"]
    lines += ["", f"### Speed (binary logistic, {fast['n_rows']:,} x 50 float32)", "",
              "| minibatch | fit s | sampling s | µs / step (4 chains) | max R-hat | min ESS |",
              "|---" * 6 + "|"]
    for k, label in (("False", "independent"), ("True", "shared")):
        m = med[k]
        lines.append(f"| {label} | {m['fit_s']:.3f} | {m['sampling_s']:.3f} | "
                     f"{m['us_per_step']:.1f} | {m['max_rhat']:.3f} | {m['min_ess']:.0f} |")
    lines += ["", f"Shared vs independent posterior means: max difference "
              f"{fast['mean_diff_sd']:.3f} posterior sd; sd ratios {fast['sd_ratio'][0]:.3f}–"
              f"{fast['sd_ratio'][1]:.3f}.", ""]
    return "\n".join(lines)


def main():
    args = cli(__doc__, seeds={"type": int, "default": 20}, repeats={"type": int, "default": 5})
    stats, fast = statistics(args), speed(args)
    text = markdown(stats, fast, args)
    print(text)
    write_markdown(args.markdown, text)
    write_json(args.json, {"statistics": stats, "speed": fast})


if __name__ == "__main__":
    main()
