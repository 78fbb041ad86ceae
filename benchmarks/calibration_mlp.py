"""Calibration of the networks' verdict against the NUTS references of ``bench_mlp_reference``.

Is every default network fit either within tolerance of the reference, or warned?  For each
reference problem (``_mlp_ref_eval.PROBLEMS``: digits, moons, cadata, sine; the references are built
and cached by ``bench_mlp_reference.py``, or here on first use) ``--seeds`` default fits
(``random_state = 0, 1, ...``) are scored on the held-out rows by the mean total variation of
their predictive to the reference's (classifiers: ``0.5 sum_k |p_k - p_ref,k|``; the regressor:
between its Gaussian predictive and the reference's moment-matched one).  A fit is *in
tolerance* when that TV is at most ``--tolerance`` (0.05: four times the digits reference's own
split-half TV, and above a deep ensemble's 0.041 there); it *warned* when ``fit`` emitted any
``UserWarning``.  The contract (as ``calibration.py``'s for the linear models): no fit out of
tolerance is silent, and at most 5% of the fits within it warn.

The verdict sees only the Monte-Carlo error of the pooled predictive, on training rows
(``diagnostics_["pooled_error"]``) and on the same rows moved 1.5 times as far from their mean
(``diagnostics_["off_data_error"]``); a bias that every chain shares is invisible to it, which is
what this table checks.

    python benchmarks/calibration_mlp.py [--quick] [--seeds 12] [--problems digits ...]
        [--cache-dir DIR] [--json P] [--markdown P]
"""

import os
import time
import warnings

import numpy as np

from _common import header, write_json, write_markdown
from _mlp_ref_eval import (PROBLEMS, classification_metrics, reference_predictive,
                           regression_metrics, summarize_reference)
from _mlp_reference import get_reference, library_estimator, reference_cli
from bench_mlp_reference import QUICK_FIT, QUICK_SETTINGS, SETTINGS


def one_fit(problem, ref, seed, quick):
    """TV to the reference, the verdict's figures, whether it warned, and the seconds."""
    est = library_estimator(problem, random_state=seed)
    if quick:
        est.set_params(**QUICK_FIT)
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(problem.X, problem.y)
    seconds = time.perf_counter() - t
    if problem.kind == "regressor":
        m = regression_metrics(*est.predict(problem.X_test, return_std=True), problem.y_test, ref)
    else:
        m = classification_metrics(est.predict_proba(problem.X_test), problem.y_test, ref)
    d = est.diagnostics_
    return {"seed": seed, "tv": m["tv"], "pooled_error": float(d["pooled_error"]),
            "modes_share": float(d["pooled_error_modes_share"]),
            "off_data_error": float(d["off_data_error"]),
            "n_doublings": int(d["n_doublings"]), "seconds": seconds,
            "warned": any(issubclass(w.category, UserWarning) for w in caught)}


def score(fits, tolerance):
    """The cells of the table: in/out of tolerance against warned/silent."""
    within = [f for f in fits if f["tv"] <= tolerance]
    out = [f for f in fits if f["tv"] > tolerance]
    return {"fits": len(fits), "within": len(within), "false_alarms": sum(f["warned"] for f in within),
            "out": len(out), "silent": sum(not f["warned"] for f in out),
            "tv_median": float(np.median([f["tv"] for f in fits])),
            "tv_max": float(np.max([f["tv"] for f in fits])),
            "error_median": float(np.median([f["pooled_error"] for f in fits])),
            "error_max": float(np.max([f["pooled_error"] for f in fits])),
            "off_median": float(np.median([f["off_data_error"] for f in fits])),
            "off_max": float(np.max([f["off_data_error"] for f in fits])),
            "seconds_median": float(np.median([f["seconds"] for f in fits]))}


def table(results, tolerance):
    lines = [f"| problem | fits | within TV {tolerance} | false alarms | out of tolerance | "
             "silent | held-out TV median / max | pooled error median / max | "
             "off-data error median / max | fit s (median) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        c = r["cells"]
        rate = c["false_alarms"] / max(c["within"], 1)
        lines.append(f"| {name} | {c['fits']} | {c['within']} | {c['false_alarms']} "
                     f"({rate:.0%}) | {c['out']} | {c['silent']} | {c['tv_median']:.3f} / "
                     f"{c['tv_max']:.3f} | {c['error_median']:.4f} / {c['error_max']:.4f} | "
                     f"{c['off_median']:.4f} / {c['off_max']:.4f} | {c['seconds_median']:.2f} |")
    return lines


def main():
    args = reference_cli(__doc__, "calibration-mlp", (2, 12),
                         tolerance={"type": float, "default": 0.05})
    if args is None:
        return
    results = {}
    for name in args.problems:
        problem = PROBLEMS[name](args.quick, args.data_dir)
        settings = QUICK_SETTINGS if args.quick else SETTINGS[name]
        theta, _ = get_reference(problem, settings, args.cache_dir)
        ref, _ = summarize_reference(problem, reference_predictive(problem, theta))
        fits = [one_fit(problem, ref, seed, args.quick) for seed in range(args.seeds)]
        results[name] = {"fits": fits, "cells": score(fits, args.tolerance)}
        print(f"[{name}] " + ", ".join(f"{k} {v:.4g}" for k, v in results[name]["cells"].items()),
              flush=True)
    lines = [header("Calibration of the networks' verdict", args, seeds=list(range(args.seeds)),
                    repeats=1, note=__doc__.split("\n\n")[1].replace("\n", " ")), ""]
    lines += table(results, args.tolerance) + [""]
    write_json(args.json, {"results": results, "tolerance": args.tolerance,
                           "load": os.getloadavg()})
    write_markdown(args.markdown, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
