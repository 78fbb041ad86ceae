"""The issue-14 structure cases: do the default fits meet the standard, or say so?

Each case fits the library's defaults (``random_state=0``) and prints the sampler that ran, the
step, the worst R-hat and bulk ESS, the doublings of the run-until-converged rule, cost and the
warnings:

* ``digits``: softmax on scikit-learn's digits (10 classes x 64 standardized features, 650
  parameters);
* ``softmax-10x60``, ``softmax-100x100``, ``softmax-10x1000``: synthetic softmax regression
  (K classes x d Gaussian features, 5,000 / 20,000 / 20,000 rows);
* ``wide-linear``: 50 rows x 2,000 features, known noise, against the exact conjugate posterior
  (max mean error in posterior sds and the range of sd ratios);
* ``mnist``: softmax on mnist's 60,000 training rows, pixels / 255 (7,850 parameters; needs
  ``mnist.npz`` under ``--data-dir`` or ``SKBAYES_SG_DATA``, else skipped).

    python benchmarks/verdict_cases.py [--cases digits,wide-linear] [--max-doublings N]
        [--json PATH] [--markdown PATH]

The full run (all cases) takes tens of minutes on 2 cores (the 10,000-parameter softmax cases
dominate); ``--quick`` fits two small stand-ins (4 classes x 5 features, 30 x 300 wide linear).
"""

import os
import time
import warnings

import numpy as np
from scipy.special import softmax
from sklearn.datasets import load_digits
from sklearn.preprocessing import StandardScaler

from _common import cli, header, write_json, write_markdown
from _data import mnist_pixels

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression


def synthetic_softmax(K, d, n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    P = softmax(X @ (2.0 * rng.normal(size=(K, d)) / np.sqrt(d)).T, axis=1)
    return X, (P.cumsum(1) > rng.random((n, 1))).argmax(1)


def digits():
    X, y = load_digits(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def mnist():
    X, y, _, _, found = mnist_pixels(60_000, 0)
    if not found:
        raise LookupError("mnist.npz not found (--data-dir or SKBAYES_SG_DATA)")
    return X, y


def wide_linear(n=50, p=2000):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    y = X @ (0.1 * rng.normal(size=p)) + 0.5 * rng.normal(size=n)
    return X, y


def _wide(n, p):
    return (BayesianLinearRegression(noise_std=0.5, fit_intercept=False, normalize_y=False,
                                     random_state=0), *wide_linear(n, p))


CASES = {
    "digits": lambda: (BayesianLogisticRegression(random_state=0), *digits()),
    "softmax-10x60": lambda: (BayesianLogisticRegression(random_state=0),
                              *synthetic_softmax(10, 60, 5000)),
    "softmax-100x100": lambda: (BayesianLogisticRegression(random_state=0),
                                *synthetic_softmax(100, 100, 20000)),
    "softmax-10x1000": lambda: (BayesianLogisticRegression(random_state=0),
                                *synthetic_softmax(10, 1000, 20000)),
    "wide-linear": lambda: _wide(50, 2000),
    "mnist": lambda: (BayesianLogisticRegression(random_state=0), *mnist()),
    "quick-softmax-4x5": lambda: (BayesianLogisticRegression(random_state=0, n_draws=200),
                                  *synthetic_softmax(4, 5, 1000)),
    "quick-wide-30x300": lambda: _wide(30, 300),
}
QUICK = ["quick-softmax-4x5", "quick-wide-30x300"]


def exact_errors(est, X, y):
    """Max |mean error| in exact sds and the sd-ratio range against the conjugate posterior."""
    cov = np.linalg.inv(X.T @ X / 0.25 + np.eye(X.shape[1]))
    mean, sd = cov @ X.T @ y / 0.25, np.sqrt(np.diag(cov))
    coef = est.sample_posterior()["coef"]
    ratio = coef.std(0) / sd
    return float(np.max(np.abs(coef.mean(0) - mean) / sd)), float(ratio.min()), float(ratio.max())


def run(name, max_doublings=None):
    try:
        est, X, y = CASES[name]()
    except LookupError as exc:
        print(f"[verdict_cases] {name} skipped: {exc}", flush=True)
        return None
    if max_doublings is not None:
        est.set_params(max_doublings=max_doublings)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    d = est.diagnostics_
    row = {"case": name, "seconds": time.perf_counter() - start, "sampler": d["sampler"],
           "step_size": d["step_size"], "rhat_max": float(np.nanmax(d["rhat"])),
           "ess_min": float(np.nanmin(d["ess"])), "n_doublings": d["n_doublings"],
           "batch_size": d["batch_size"], "data_passes": d["data_passes"],
           "converged": bool(d["converged"]),
           "warnings": [f"{w.category.__name__}: {str(w.message)[:200]}" for w in caught]}
    for space in ("identified", "predictive"):  # the quantities the verdict judged, if not raw
        if f"{space}_rhat" in d:
            row["judged"] = space
            row["judged_rhat_max"] = float(np.nanmax(d[f"{space}_rhat"]))
            row["judged_ess_min"] = float(np.nanmin(d[f"{space}_ess"]))
    if "wide" in name:
        row["max_error_sd"], row["sd_ratio_min"], row["sd_ratio_max"] = exact_errors(est, X, y)
    print(row, flush=True)
    return row


def judged(r):
    if "judged" not in r:
        return "raw"
    return f"{r['judged']}: {r['judged_rhat_max']:.3f}, {r['judged_ess_min']:.0f}"


def table(rows):
    lines = ["| case | seconds | sampler | max R-hat | min bulk ESS | judged on: max R-hat, min ESS "
             "| doublings | passes | converged | exact check | warnings |", "|" + "---|" * 11]
    for r in rows:
        exact = (f"{r['max_error_sd']:.3f} sd, ratios {r['sd_ratio_min']:.3f}-"
                 f"{r['sd_ratio_max']:.3f}" if "max_error_sd" in r else "")
        lines.append(f"| {r['case']} | {r['seconds']:.1f} | {r['sampler']} | {r['rhat_max']:.3f} "
                     f"| {r['ess_min']:.0f} | {judged(r)} | {r['n_doublings']} | {r['data_passes']:.0f} | "
                     f"{r['converged']} | {exact} | {len(r['warnings'])} |")
    return "\n".join(lines)


if __name__ == "__main__":
    args = cli(__doc__, cases={"default": None, "help": "comma-separated case names"},
               max_doublings={"type": int, "default": None,
                              "help": "the run-until-converged budget (default: the library's)"})
    names = QUICK if args.quick else (args.cases.split(",") if args.cases else
                                      [c for c in CASES if c not in QUICK])
    if args.data_dir:
        os.environ["SKBAYES_SG_DATA"] = args.data_dir
    rows = [r for r in (run(name, args.max_doublings) for name in names) if r is not None]
    write_json(args.json, {"rows": rows})
    write_markdown(args.markdown, header("Issue 14 structure cases", args, seeds=[0], repeats=1)
                   + table(rows) + "\n")
