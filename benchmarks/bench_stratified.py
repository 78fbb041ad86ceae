"""Stratified (k-means, CP-SG-MCMC) vs uniform minibatches for softmax logistic regression.

Reproduces seed paper 000 (Fu & Zhang 2017, CPSG-MCMC), Table 2: SGLD vs
CP-SGLD (``subsampling="stratified"``), plus SGHMC vs stratified SGHMC, for
Bayesian multiclass logistic regression (``BayesianLogisticRegression``,
softmax) at EQUAL steps, EQUAL batch size (100, as the paper) and EQUAL step
size: a short uniform calibration fit per (dataset, sampler) picks
``step_size="auto"``; every fit then uses ``STEP_MULT`` (10) times that float
(the library's auto step is conservative -- 95% quantile of the gradient
noise -- and at 1x the chains barely move in the time box).  One chain per
fit (as the paper).

Reported per (dataset, sampler, strategy), mean ± sd over seeds: k-means
seconds (``preprocessing_["kmeans_seconds"]``), burn-in seconds (the warm-up
share of ``sampling_seconds``), ESS of the stored draws (min and median over
coordinates, bulk) and ESS of the per-draw test log-likelihood trace, ESS per
second (ESS / (k-means + sampling seconds), the paper's "total runtime"),
test error, and data passes including preprocessing.

    python benchmarks/bench_stratified.py [--quick] [--json PATH] [--markdown PATH] \
        [--data-dir DIR] [--plot PATH] [--seeds N]
"""

import time
import warnings

import numpy as np
from sklearn.decomposition import PCA

from _common import cli, header, machine, mean_sd, save_plot, write_json, write_markdown
from _data import load
from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.diagnostics import effective_sample_size

# Paper 000, Table 2 (SGLD -> CP-SGLD, 5 runs): ESS per second and test error.
PAPER = {"letter": "ESS/s 7.63 → 11.96, error 0.211 → 0.204",
         "pendigits": "ESS/s 15.16 → 21.51, error 0.229 → 0.220",
         "covtype_binary_subset20k": "(full covtype) ESS/s 2.65 → 2.84, error 0.280 → 0.273",
         "mnist": "ESS/s 1.67 → 1.94, error 0.240 → 0.215",
         "usps": "not in Table 2 (Table 1/Figure 1 only)"}
FULL = {"datasets": ["usps", "pendigits", "mnist", "covtype_binary_subset20k"],
        "n_warmup": 2000, "n_draws": 2000, "thin": 10, "mnist_rows": 10000, "mnist_pca": 50}
QUICK = {"datasets": ["pendigits", "covtype_binary_subset20k"],
         "n_warmup": 100, "n_draws": 150, "thin": 2, "max_rows": 300, "mnist_rows": 300, "mnist_pca": 20}
SAMPLERS = ["sgld", "sghmc"]
STRATEGIES = ["uniform", "stratified"]
STEP_MULT = 10.0
N_TRACE = 500  # draws (evenly thinned) and test rows used for the test log-likelihood trace


def dataset(name, args, cfg):
    """Standardized data; mnist is row-subsampled and reduced to PCA features."""
    Xtr, ytr, Xte, yte, _ = load(name, args.data_dir, quick=args.quick, max_rows=cfg.get("max_rows"))
    note = ""
    if name == "mnist":
        n = cfg["mnist_rows"]
        Xtr, ytr, Xte, yte = Xtr[:n], ytr[:n], Xte[:n // 4], yte[:n // 4]
        k = min(cfg["mnist_pca"], Xtr.shape[1])
        pca = PCA(n_components=k, random_state=0).fit(Xtr)
        Xtr, Xte = pca.transform(Xtr), pca.transform(Xte)
        sd = Xtr.std(axis=0)
        Xtr, Xte = Xtr / sd, Xte / sd
        note = f"first {len(ytr)} training rows, PCA-{k} features (standardized)"
    return Xtr, ytr, Xte, yte, note


def test_loglik_trace(est, Xte, yte):
    """Mean test log-likelihood of each (thinned) stored draw."""
    draws = est.draws_[0]
    draws = draws[np.linspace(0, len(draws) - 1, min(N_TRACE, len(draws))).astype(int)]
    rows = slice(0, min(N_TRACE, len(yte)))
    proba = est.model_.predict_output(draws, Xte[rows])  # (draws, rows, classes)
    if proba.ndim == 2:  # binary: P(class 1)
        proba = np.stack([1 - proba, proba], axis=-1)
    idx = np.searchsorted(est.classes_, yte[rows])
    p = proba[:, np.arange(len(idx)), idx]
    return np.log(np.maximum(p, 1e-300)).mean(axis=1)


def test_metrics(est, Xte, yte):
    """Posterior-predictive test error and mean test log-likelihood (one predict_proba)."""
    proba = est.predict_proba(Xte)
    p_true = proba[np.arange(len(yte)), np.searchsorted(est.classes_, yte)]
    return {"test_error": float(np.mean(est.classes_[np.argmax(proba, axis=1)] != yte)),
            "test_loglik": float(np.mean(np.log(np.maximum(p_true, 1e-300))))}


def fit_one(data, sampler, strategy, step, seed, cfg):
    Xtr, ytr, Xte, yte = data
    est = BayesianLogisticRegression(sampler=sampler, subsampling=strategy, batch_size=100,
                                     step_size=step, n_warmup=cfg["n_warmup"],
                                     n_draws=cfg["n_draws"], thin=cfg["thin"], n_chains=1, n_jobs=1,
                                     random_state=seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xtr, ytr)
    total = time.perf_counter() - start
    d, pre = est.diagnostics_, est.preprocessing_
    kmeans = float(pre.get("kmeans_seconds", 0.0))
    sampling = float(d["sampling_seconds"])
    ess = np.asarray(d["ess"], float)
    trace = test_loglik_trace(est, Xte, yte)
    ess_ll = float(effective_sample_size(trace)) * len(est.draws_[0]) / len(trace)
    runtime = kmeans + sampling
    steps = cfg["n_warmup"] + cfg["n_draws"] * cfg["thin"]
    row = {"kmeans_s": kmeans, "burnin_s": sampling * cfg["n_warmup"] / steps,
           "sampling_s": sampling, "fit_s": total, "ess_min": float(ess.min()),
           "ess_median": float(np.median(ess)), "ess_testll": ess_ll,
           "ess_median_per_s": float(np.median(ess)) / runtime, "ess_testll_per_s": ess_ll / runtime,
           **test_metrics(est, Xte, yte),
           "data_passes": float(d["data_passes"]), "n_grad_evals": int(d["n_grad_evals"]),
           "grad_noise": float(d["gradient_noise"]), "step_size": float(d["step_size"])}
    if strategy == "stratified":
        row["n_strata"] = int(est.preprocessing_["n_strata"])
    return row


def calibrate(data, sampler, cfg):
    """``STEP_MULT`` x the automatic step of a short uniform fit (seed 0)."""
    short = dict(cfg, n_warmup=10, n_draws=20, thin=1)
    return STEP_MULT * fit_one(data, sampler, "uniform", "auto", 0, short)["step_size"]


def run_dataset(name, args, cfg, seeds):
    Xtr, ytr, Xte, yte, note = dataset(name, args, cfg)
    out = {"n_train": len(ytr), "n_test": len(yte), "n_features": Xtr.shape[1],
           "n_classes": int(len(np.unique(ytr))), "note": note, "paper": PAPER.get(name, "")}
    data = (Xtr, ytr, Xte, yte)
    for sampler in SAMPLERS:
        step = out[f"step_{sampler}"] = calibrate(data, sampler, cfg)
        for strategy in STRATEGIES:
            out[f"{sampler}/{strategy}"] = []
        for seed in seeds:
            uni = fit_one(data, sampler, "uniform", step, seed, cfg)
            strat = fit_one(data, sampler, "stratified", step, seed, cfg)
            out[f"{sampler}/uniform"].append(uni)
            out[f"{sampler}/stratified"].append(strat)
            print(f"[{name} {sampler} seed {seed}] ESS med {uni['ess_median']:.1f} -> "
                  f"{strat['ess_median']:.1f}, err {uni['test_error']:.4f} -> "
                  f"{strat['test_error']:.4f}", flush=True)
    return out


COLS = [("kmeans_s", "k-means s"), ("burnin_s", "burn-in s"), ("sampling_s", "sampling s"),
        ("ess_min", "ESS min"), ("ess_median", "ESS median"), ("ess_testll", "ESS test-LL"),
        ("ess_median_per_s", "ESS med/s"), ("ess_testll_per_s", "ESS test-LL/s"),
        ("test_error", "test error"), ("test_loglik", "test LL"), ("data_passes", "data passes"),
        ("grad_noise", "grad noise")]


def markdown(results, args, cfg, seeds):
    note = ("Batch size 100, one chain, " f"{cfg['n_warmup']} warm-up + {cfg['n_draws']} kept draws "
            f"(thin {cfg['thin']}) per fit (the paper's step counts are not stated). Equal steps, batch "
            f"and step size: both strategies use {STEP_MULT:g}x the automatic step of a short uniform "
            "fit (the 1x auto step is conservative and the chains barely moved at it). "
            "`subsampling=\"stratified\"` is the library default `Stratified()` (k=20, 5 Lloyd "
            "iterations, features within each class), not the paper's k=10 on x alone. ESS: bulk ESS "
            "over the coordinates of the stored draws (min, median), and ESS of the per-draw mean test "
            "log-likelihood (thinned to 500 draws on 500 test rows, rescaled to all draws). ESS/s divides "
            "by k-means + sampling seconds (the paper's total runtime); burn-in s is the warm-up share "
            "of sampling seconds. Data passes include the library's preprocessing (mode search, "
            "step-size calibration), which is identical for both strategies and dominates; k-means "
            "costs no gradient evaluations. grad noise is the library's per-coordinate minibatch gradient "
            "noise in posterior units (`diagnostics_[\"gradient_noise\"]`). covtype is the 20k-row binary subset, not the paper's full "
            "581k rows.")
    lines = [header("Stratified (CP-SG-MCMC) vs uniform minibatches, seed paper 000 Table 2", args,
                    seeds=list(seeds), repeats=len(seeds), note=note)]
    for name, res in results.items():
        lines += [f"### {name} (N={res['n_train']}, d={res['n_features']}, K={res['n_classes']})", ""]
        if res["note"]:
            lines += [f"Scaled down: {res['note']}.", ""]
        lines += [f"Paper (SGLD → CP-SGLD): {res['paper']}.", "",
                  f"Step sizes: sgld {res['step_sgld']:.3g}, sghmc {res['step_sghmc']:.3g}.", "",
                  "| sampler | strategy | " + " | ".join(c[1] for c in COLS) + " |",
                  "|---|---|" + "---|" * len(COLS)]
        for key in (k for k in res if "/" in k):
            cells = [mean_sd([r[c] for r in res[key]]) for c, _ in COLS]
            lines.append(f"| {key.replace('/', ' | ')} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def figure(results):
    def draw(plt):
        names = list(results)
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
        for ax, metric, label in [(axes[0], "ess_testll_per_s", "ESS (test log-lik) per second"),
                                  (axes[1], "test_error", "test error")]:
            width = 0.2
            for j, key in enumerate(f"{s}/{t}" for s in SAMPLERS for t in STRATEGIES):
                vals = [np.mean([r[metric] for r in results[n][key]]) for n in names]
                errs = [np.std([r[metric] for r in results[n][key]]) for n in names]
                ax.bar(np.arange(len(names)) + (j - 1.5) * width, vals, width, yerr=errs, label=key)
            ax.set_xticks(np.arange(len(names)), names, rotation=15, fontsize=8)
            ax.set_ylabel(label)
        axes[0].legend(fontsize=7)
        fig.suptitle("Uniform vs stratified minibatches (equal steps, batch 100)")
        return fig
    return draw


def main():
    args = cli(__doc__, seeds={"type": int, "default": None, "help": "number of seeds"})
    cfg = QUICK if args.quick else FULL
    seeds = list(range(args.seeds or (1 if args.quick else 3)))
    start = time.perf_counter()
    results = {name: run_dataset(name, args, cfg, seeds) for name in cfg["datasets"]}
    elapsed = time.perf_counter() - start
    print(f"[done] {elapsed:.1f} s")
    text = markdown(results, args, cfg, seeds) + f"\nTotal run time: {elapsed:.0f} s.\n"
    write_json(args.json, {"machine": machine(), "config": cfg, "seeds": seeds,
                           "seconds": elapsed, "results": results})
    write_markdown(args.markdown, text)
    save_plot(figure(results), args.plot)


if __name__ == "__main__":
    main()
