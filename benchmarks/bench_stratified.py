"""Stratified (k-means, CP-SG-MCMC) vs uniform minibatches under the paper's protocol.

Seed paper 000 (Fu & Zhang 2017, CPSG-MCMC), Table 2 and Figures 1/5: SGLD vs CP-SGLD
for Bayesian multiclass (softmax) logistic regression, minibatch 100, k = 10 clusters of the
features, a fixed step "optimized for each method", 5 runs; the claim is that CP-SGLD "converges
faster and achieves a significantly smaller and stable test error".  This script tests it as the
paper ran it, not at the library's defaults:

* arms -- SGLD with uniform minibatches; SGLD with the paper's strata
  (``Stratified(n_clusters=10, features="x")``); SGLD with the library's default strata
  (``Stratified()``: k = 20, clustered within each class).  All unpreconditioned
  (``preconditioner=None``), batch 100, started cold at ``init="zeros"`` (uniform predictions,
  the same start for every arm and run, so only the gradient estimator differs; prior draws
  would add start-to-start variance that has nothing to do with the estimator), no warm-up
  discarded by the library: every step is stored (thinned) so the transient is visible.
  The runs of an arm are independent chains of one fit (own noise and minibatch streams,
  shared strata), so the library's preprocessing is paid once per arm;
* step tuned per arm -- steps ``c / lambda0`` for ``c`` on a half-decade grid (extended while
  the best ``c`` sits at an edge), ``lambda0`` the largest curvature of the negative
  log-likelihood at the start (``lambda_max(X1'X1) / K`` for softmax, ``/ 4`` for binary;
  ``X1`` = features with the intercept column); each arm keeps the ``c`` with the smallest
  validation log-loss of its posterior-predictive average after the fixed budget (a 20% split
  of the training rows held out, a separate seed); the chosen ``c`` is then applied with
  ``lambda0`` of the full training set;
* cost -- sampling data passes (per-example gradient evaluations / N,
  ``diagnostics_["sampling_grad_evals"]``); the library's mode/Laplace preprocessing (which a
  cold unpreconditioned chain does not use) and k-means (no gradients) are reported apart,
  never inside an efficiency figure; seconds only as secondary information;
* metrics -- the paper's: test log-loss and test error of the running posterior-predictive
  average (draws in the window [p/2, p] passes, i.e. the first half discarded as burn-in)
  against sampling data passes p; passes until that log-loss is within ``TARGET`` nats of the
  best arm's final value (one target per data set); and ESS of the per-draw test
  log-likelihood over the second half -- printed only where every run mixed there (split
  R-hat <= 1.1 and ESS >= 20), "not mixed" otherwise.  The library's default fit
  (preconditioned, warm) is drawn for context, marked where it did not converge.

    python benchmarks/bench_stratified.py [--quick] [--json PATH] [--markdown PATH] \
        [--data-dir DIR] [--plot PATH] [--runs N] [--datasets NAME ...]
"""

import time

import numpy as np
from sklearn.decomposition import PCA

from _common import cli, load_npz, machine, save_plot, write_json, write_markdown
from _data import load
from _stratified_report import figure, markdown
from _stratified_run import (ARMS, BATCH, EVAL_SEED, REF_SEED, TARGET, TUNE_SEED, checkpoints,
                             evaluate, ok_runs, passes_to, reference, start_curvature, tune)

# Paper 000, Table 2 (SGLD -> CP-SGLD, 5 runs, full data sets): ESS/s and test error.
PAPER = {"letter": "ESS/s 7.63 → 11.96, test error 0.211 → 0.204",
         "pendigits": "ESS/s 15.16 → 21.51, test error 0.229 → 0.220",
         "covtype_binary_subset20k": "(full covtype, 523k rows) ESS/s 2.65 → 2.84, "
                                     "test error 0.280 → 0.273",
         "mnist": "(60k rows, 784 pixels) ESS/s 1.67 → 1.94, test error 0.240 → 0.215",
         "usps": "not in Table 2 (Table 1 / Figure 1 only)"}
FULL = {"datasets": ["pendigits", "letter", "usps", "mnist", "covtype_binary_subset20k"],
        "passes": 100, "grid": [-0.5, 0.0, 0.5], "max_extend": 2, "tune_chains": 2, "runs": 5,
        "n_store": 300, "n_checkpoints": 20, "val_fraction": 0.2, "mnist_rows": 10000,
        "mnist_pca": 50, "max_test": 3000, "reference": True}
QUICK = {"datasets": ["pendigits", "covtype_binary_subset20k"], "max_rows": 200,
         "passes": 10, "grid": [0.0, 0.5], "max_extend": 1, "tune_chains": 1, "runs": 2,
         "n_store": 40, "n_checkpoints": 4, "val_fraction": 0.2, "mnist_rows": 300,
         "mnist_pca": 20, "max_test": 200, "reference": False}


def dataset(name, args, cfg):
    """Features as the paper used them; mnist row-subsampled and reduced to PCA features.

    usps keeps its [-1, 1] pixels as distributed (the paper's LIBSVM copy is also scaled to
    [-1, 1]): standardizing the near-constant border pixels, as ``_data.load`` does, turns them
    into values up to 31.
    """
    Xtr, ytr, Xte, yte, _ = load(name, args.data_dir, quick=args.quick,
                                 max_rows=cfg.get("max_rows"))
    note = ""
    raw = load_npz(name, args.data_dir) if name == "usps" else None
    if raw is not None:
        Xtr, Xte = (np.asarray(raw[k], dtype=float) for k in ("X_train", "X_test"))
        note = "pixels in [-1, 1] as distributed (not standardized)"
    if name == "mnist":
        n = cfg["mnist_rows"]
        Xtr, ytr, Xte, yte = Xtr[:n], ytr[:n], Xte[:n // 4], yte[:n // 4]
        k = min(cfg["mnist_pca"], Xtr.shape[1])
        pca = PCA(n_components=k, random_state=0).fit(Xtr)
        Xtr, Xte = pca.transform(Xtr), pca.transform(Xte)
        sd = Xtr.std(axis=0)
        Xtr, Xte = Xtr / sd, Xte / sd
        note = f"first {len(ytr)} training rows, PCA-{k} features (standardized)"
    if len(yte) > cfg["max_test"]:
        Xte, yte = Xte[:cfg["max_test"]], yte[:cfg["max_test"]]
        note += ("; " if note else "") + f"first {cfg['max_test']} test rows"
    return Xtr, ytr, Xte, yte, note


def run_dataset(name, args, cfg, n_runs):
    Xtr, ytr, Xte, yte, note = dataset(name, args, cfg)
    K = len(np.unique(ytr))
    passes = checkpoints(cfg)
    out = {"n_train": len(ytr), "n_test": len(yte), "n_features": Xtr.shape[1], "n_classes": K,
           "note": note, "paper": PAPER.get(name, ""), "passes": list(passes)}
    t0 = time.perf_counter()
    out["reference"] = reference(Xtr, ytr, Xte, yte) if cfg["reference"] else None
    t1 = time.perf_counter()
    out["tuning"] = tune(name, Xtr, ytr, cfg)
    t2 = time.perf_counter()
    lam0 = out["lambda0"] = start_curvature(Xtr, K)
    for arm in ARMS:
        c = out["tuning"][arm]["c"]
        out[arm] = {"c": c, "step": c / lam0,
                    **evaluate(name, arm, c / lam0, (Xtr, ytr, Xte, yte), cfg, n_runs)}
    finals = [np.mean([r["logloss"][-1] for r in ok_runs(out[arm]["runs"])])
              for arm in ARMS if ok_runs(out[arm]["runs"])]
    out["target"] = float(min(finals) + TARGET) if finals else None
    for arm in ARMS:
        for r in ok_runs(out[arm]["runs"]):
            r["passes_to_target"] = passes_to(r["logloss"], passes, out["target"])
    out["seconds"] = {"reference": t1 - t0, "tuning": t2 - t1,
                      "evaluation": time.perf_counter() - t2}
    return out


def main():
    args = cli(__doc__, runs={"type": int, "default": None, "help": "runs (chains) per arm"},
               datasets={"nargs": "+", "default": None, "help": "subset of the data sets"})
    cfg = dict(QUICK if args.quick else FULL)
    if args.datasets:
        cfg["datasets"] = args.datasets
    n_runs = args.runs or cfg["runs"]
    start = time.perf_counter()
    results = {name: run_dataset(name, args, cfg, n_runs) for name in cfg["datasets"]}
    elapsed = time.perf_counter() - start
    print(f"[done] {elapsed:.1f} s")
    write_json(args.json, {"machine": machine(), "config": cfg, "runs": n_runs,
                           "seeds": {"tuning": TUNE_SEED, "evaluation": EVAL_SEED,
                                     "reference": REF_SEED}, "batch": BATCH,
                           "target_nats": TARGET, "seconds": elapsed,
                           "results": results})
    write_markdown(args.markdown, markdown(results, args, cfg, n_runs, elapsed))
    save_plot(figure(results, cfg), args.plot)


if __name__ == "__main__":
    main()
