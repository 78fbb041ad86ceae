"""A default BayesianMLPClassifier fit on MNIST, phase by phase, against MLPClassifier (issue 16).

The library's default 784-100-10 network (``BayesianMLPClassifier(random_state=0)``) on MNIST's
60,000 training rows as float32 (pixels / 255), and scikit-learn's ``MLPClassifier`` with its
defaults (one hidden layer of 100, Adam, up to 200 epochs), both judged on the 10,000 test rows
(accuracy, log-loss).  The fit's seconds are split, from its own record ``diagnostics_["phases"]``, into

* ``mode``: the Adam run whose optimum centres the preconditioner and starts chain 0;
* ``starts``: what the extra Adam runs of chains ``1..`` add at the end of the preprocessing
  (they run alongside the rest of it when BLAS may use two threads);
* ``preprocessing``: everything before sampling (``diagnostics_["preprocessing_seconds"]``:
  mode, starts, the Fisher preconditioner, the gradient-noise pilots, the step rule);
* ``sampling``: the chains (``diagnostics_["sampling_seconds"]``, doublings included);
* ``verdict and summaries``: the rest of ``fit`` (the function-space verdict after each round,
  R-hat and ESS of every raw weight, posterior means).

Needs ``mnist.npz`` (``--data-dir`` / ``SKBAYES_SG_DATA``); without it, uniform noise of the
same shape stands in (the figures then mean nothing).  ``--quick``: 2,000 rows, 200 test rows, a
hidden layer of 16, short chains.  Expect about 2 minutes for the full run.

    python benchmarks/bench_mlp_fit.py [--quick] [--data-dir DIR] [--json PATH] [--markdown PATH]
"""

import os
import time
import warnings

import numpy as np
from sklearn.metrics import log_loss
from sklearn.neural_network import MLPClassifier

from _common import cli, header, write_json, write_markdown
from _data import mnist_pixels

from skbayes_sg import BayesianMLPClassifier

FULL = {"rows": 60_000, "test": 10_000, "fit": {}, "sk": {}}
QUICK = {"rows": 2_000, "test": 200,
         "fit": {"hidden_layer_sizes": (16,), "n_warmup": 50, "n_draws": 20, "thin": 2},
         "sk": {"hidden_layer_sizes": (16,), "max_iter": 5}}


def mnist(size, data_dir):
    X, y, Xt, yt, found = mnist_pixels(size["rows"], size["test"], data_dir, np.float32)
    return X, y, Xt, yt, "mnist" if found else "noise"


def ours(size, X, y, Xt, yt):
    est = BayesianMLPClassifier(random_state=0, **size["fit"])
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    fit = time.perf_counter() - t0
    d, proba = est.diagnostics_, est.predict_proba(Xt)
    return {"fit_seconds": fit, "mode_seconds": d["phases"]["mode"]["seconds"],
            "starts_seconds": d["phases"]["starts"]["seconds"],
            "preprocessing_seconds": d["preprocessing_seconds"],
            "sampling_seconds": d["sampling_seconds"],
            "verdict_seconds": fit - d["preprocessing_seconds"] - d["sampling_seconds"],
            "n_doublings": d["n_doublings"], "doublings_needed": d["doublings_needed"],
            "predictive_rhat": float(np.nanmax(d["predictive_rhat"])),
            "pooled_error": float(d["pooled_error"]), "off_data_error": float(d["off_data_error"]),
            "warned": any(issubclass(w.category, UserWarning) for w in caught),
            "accuracy": float(np.mean(proba.argmax(1) == yt)),
            "log_loss": float(log_loss(yt, proba, labels=np.arange(10)))}


def sklearn_fit(size, X, y, Xt, yt):
    est = MLPClassifier(random_state=0, **size["sk"])
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    fit = time.perf_counter() - t0
    proba = est.predict_proba(Xt)
    return {"fit_seconds": fit, "accuracy": float(np.mean(proba.argmax(1) == yt)),
            "log_loss": float(log_loss(yt, proba, labels=np.arange(10)))}


def markdown(r, sk, source, args):
    note = ("Default settings, float32 X, one process (BLAS threads as the library sets them: "
            "one during preprocessing, the extra Adam runs in a second thread). Seconds are wall "
            "seconds of one fit; `starts` is what the extra Adam runs add after the rest (see the "
            "script's docstring).")
    lines = [header(f"MLP 784-100-10 fit on {source}", args, seeds=[0], repeats=1, note=note),
             "", "| | seconds |", "|---|---|"]
    for key in ("mode", "starts", "preprocessing", "sampling", "verdict", "fit"):
        lines.append(f"| {key} | {r[key + '_seconds']:.1f} |")
    early = ("" if r["doublings_needed"] is None else
             f" (stopped early: about {r['doublings_needed']:.2g} more projected)")
    lines += ["", f"Sampling doublings: {r['n_doublings']}{early}; predictive R-hat "
              f"{r['predictive_rhat']:.3f}; pooled predictive's Monte-Carlo error "
              f"{r['pooled_error']:.4f} on the training rows, {r['off_data_error']:.4f} off the "
              f"data (tolerance 0.02); warned: {r['warned']}.", "",
              "| estimator | fit s | test accuracy | test log-loss |", "|---|---|---|---|",
              f"| BayesianMLPClassifier | {r['fit_seconds']:.1f} | {r['accuracy']:.4f} | "
              f"{r['log_loss']:.4f} |",
              f"| MLPClassifier | {sk['fit_seconds']:.1f} | {sk['accuracy']:.4f} | "
              f"{sk['log_loss']:.4f} |"]
    return "\n".join(lines) + "\n"


def main():
    args = cli(__doc__)
    size = QUICK if args.quick else FULL
    X, y, Xt, yt, source = mnist(size, args.data_dir)
    r = ours(size, X, y, Xt, yt)
    sk = sklearn_fit(size, X, y, Xt, yt)
    print(f"[ours] fit {r['fit_seconds']:.1f} s (mode {r['mode_seconds']:.1f}, starts "
          f"{r['starts_seconds']:.1f}, prep {r['preprocessing_seconds']:.1f}, sampling "
          f"{r['sampling_seconds']:.1f}, verdict {r['verdict_seconds']:.1f}); log-loss "
          f"{r['log_loss']:.4f}; sklearn {sk['fit_seconds']:.1f} s, log-loss {sk['log_loss']:.4f}")
    write_json(args.json, {"source": source, "ours": r, "sklearn": sk,
                           "load": os.getloadavg()})
    write_markdown(args.markdown, markdown(r, sk, source, args))


if __name__ == "__main__":
    main()
