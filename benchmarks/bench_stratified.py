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
import warnings

import numpy as np
from sklearn.decomposition import PCA
from sklearn.model_selection import train_test_split

from _common import (cli, header, load_npz, machine, mean_sd, save_plot, write_json,
                     write_markdown)
from _data import load
from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.diagnostics import effective_sample_size, split_rhat

# The paper's convergence-speed comparison judges one chain's second half; its committed results
# use this looser "mixed" criterion (the library's verdict, diagnostics.assess, is R-hat <= 1.01
# and ESS >= 100 per chain, which these short single-chain runs are not meant to meet).
RHAT_MAX, ESS_MIN = 1.1, 20
from skbayes_sg.subsampling import Stratified
from skbayes_sg.utils import DivergenceError

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
BATCH = 100          # the paper's minibatch for logistic regression
TARGET = 0.01        # passes to target: log-loss within 0.01 nats of the best final arm mean
ARMS = {"uniform": lambda: "uniform",
        "paper k=10 x": lambda: Stratified(n_clusters=10, features="x"),
        "library k=20 xy": lambda: Stratified()}
TUNE_SEED, EVAL_SEED, REF_SEED = 1000, 1, 0


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


def start_curvature(X, n_classes):
    """Largest eigenvalue of the log-likelihood Hessian at theta = 0 (the cold start)."""
    X1 = np.column_stack([X, np.ones(len(X))])
    lam = float(np.linalg.eigvalsh(X1.T @ X1)[-1])
    return lam / (4.0 if n_classes == 2 else n_classes)


def fit_sgld(X, y, arm, step, cfg, *, chains, seed):
    """Cold-start unpreconditioned SGLD for ``cfg["passes"]`` sampling passes; None if diverged."""
    n_steps = int(np.ceil(cfg["passes"] * len(y) / min(BATCH, len(y))))
    thin = max(1, n_steps // cfg["n_store"])
    est = BayesianLogisticRegression(
        sampler="sgld", subsampling=ARMS[arm](), batch_size=BATCH, step_size=step,
        preconditioner=None, init="zeros", n_warmup=0, n_draws=n_steps // thin, thin=thin,
        n_chains=chains, n_jobs=1, random_state=seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
    except (DivergenceError, FloatingPointError):
        return None
    return est


def checkpoints(cfg):
    """Sampling passes at which the running average is evaluated (geometric grid up to B)."""
    B = cfg["passes"]
    return np.geomspace(B / 200, B, cfg["n_checkpoints"])


def trajectory(est, X, y, cfg):
    """Per chain: log-loss and error of the window average at each checkpoint, test-LL trace.

    The window at ``p`` passes averages the predictive probabilities of the stored draws between
    ``p/2`` and ``p`` passes.  Draws are processed in chunks; cumulative sums of the
    probabilities are kept only at the window ends.
    """
    draws, passes = est.draws_, checkpoints(cfg)
    S = draws.shape[1]
    ends = np.maximum(np.round(passes / cfg["passes"] * S).astype(int), 2)
    starts = ends // 2
    marks = set(starts) | set(ends)
    idx = np.searchsorted(est.classes_, y)
    rows = np.arange(len(y))
    out = []
    for chain in draws:
        cum, saved, trace = 0.0, {}, np.empty(S)
        for s0 in range(0, S, 50):
            P = est.model_.predict_output(chain[s0:s0 + 50], X)  # (s, n, K)
            trace[s0:s0 + len(P)] = np.log(np.maximum(P[:, rows, idx], 1e-300)).mean(axis=1)
            for j, p in enumerate(P, start=s0 + 1):
                cum = cum + p
                if j in marks:
                    saved[j] = cum.copy()
        logloss, error = [], []
        for a, b in zip(starts, ends):
            avg = (saved[b] - saved[a]) / (b - a)
            logloss.append(float(-np.mean(np.log(np.maximum(avg[rows, idx], 1e-300)))))
            error.append(float(np.mean(np.argmax(avg, axis=1) != idx)))
        out.append({"logloss": logloss, "error": error, "trace": trace})
    return out


def mixing(chain_draws, trace):
    """ESS and split R-hat of the test-LL trace and share of mixed coordinates, second half."""
    half = len(trace) // 2
    tr, dr = trace[half:], chain_draws[half:]
    ess, rhat = float(effective_sample_size(tr)), float(split_rhat(tr))
    ess_c, rhat_c = effective_sample_size(dr[None]), split_rhat(dr[None])
    ok = (rhat_c <= RHAT_MAX) & (ess_c >= ESS_MIN)
    return {"ess_ll": ess, "rhat_ll": rhat, "mixed": bool(rhat <= RHAT_MAX and ess >= ESS_MIN),
            "coords_mixed": float(np.mean(ok))}


def passes_to(curve, passes, target):
    """First pass count (log-linear interpolation between checkpoints) with ``curve <= target``."""
    curve = np.asarray(curve)
    below = np.flatnonzero(curve <= target)
    if below.size == 0:
        return float("inf")
    j = below[0]
    if j == 0:
        return float(passes[0])
    x0, x1, y0, y1 = np.log(passes[j - 1]), np.log(passes[j]), curve[j - 1], curve[j]
    return float(np.exp(x0 + (x1 - x0) * (y0 - target) / (y0 - y1)))


def choose(scores):
    """The ``c`` with the smallest validation log-loss (the smallest ``c`` if all diverged)."""
    finite = {c: v for c, v in scores.items() if np.isfinite(v)}
    return min(finite, key=finite.get) if finite else min(scores)


def tune_arm(name, arm, data, lam0, cfg):
    """Grid of ``c`` (half-decades), extended while the choice sits at its edge."""
    Xf, yf, Xv, yv = data
    scores, details = {}, {}

    def score(g):
        c = float(10.0 ** g)
        est = fit_sgld(Xf, yf, arm, c / lam0, cfg, chains=cfg["tune_chains"], seed=TUNE_SEED)
        if est is None:
            scores[c], details[c] = float("inf"), {"diverged": True, "val_error": float("nan")}
            return
        tr = trajectory(est, Xv, yv, cfg)
        scores[c] = float(np.mean([t["logloss"][-1] for t in tr]))
        details[c] = {"diverged": False, "val_error": float(np.mean([t["error"][-1]
                                                                       for t in tr]))}

    exps = list(cfg["grid"])
    for g in exps:
        score(g)
    up = down = 0
    while True:
        best = choose(scores)
        if best == max(scores) and up < cfg["max_extend"]:
            up += 1
            exps.append(max(exps) + 0.5)
            score(exps[-1])
        elif best == min(scores) and down < cfg["max_extend"]:
            down += 1
            exps.append(min(exps) - 0.5)
            score(exps[-1])
        else:
            break
    cs = sorted(scores)
    c = choose(scores)
    print(f"[{name} tune {arm}] " + ", ".join(f"c={k:.3g}: {scores[k]:.4f}" for k in cs)
          + f" -> c={c:.3g}", flush=True)
    return {"scores": [{"c": k, "val_logloss": scores[k], **details[k]} for k in cs], "c": c,
            "at_edge": c in (cs[0], cs[-1])}


def tune(name, Xtr, ytr, cfg):
    """Validation split, ``lambda0`` of its fitting part, and the tuned ``c`` of every arm."""
    Xf, Xv, yf, yv = train_test_split(Xtr, ytr, test_size=cfg["val_fraction"],
                                      random_state=0, stratify=ytr)
    lam0 = start_curvature(Xf, len(np.unique(ytr)))
    out = {"lambda0": lam0, "n_fit": len(yf), "n_val": len(yv)}
    for arm in ARMS:
        out[arm] = tune_arm(name, arm, (Xf, yf, Xv, yv), lam0, cfg)
    return out


def reference(Xtr, ytr, Xte, yte):
    """The library's default fit (preconditioned, warm): context for the curves."""
    est = BayesianLogisticRegression(random_state=REF_SEED)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xtr, ytr)
    proba = est.predict_proba(Xte)
    idx = np.searchsorted(est.classes_, yte)
    rhat = float(np.nanmax(est.diagnostics_["rhat"]))
    return {"logloss": float(-np.mean(np.log(np.maximum(proba[np.arange(len(idx)), idx],
                                                          1e-300)))),
            "error": float(np.mean(est.classes_[np.argmax(proba, axis=1)] != yte)),
            "rhat_max": rhat, "converged": rhat <= RHAT_MAX,
            "data_passes": float(est.diagnostics_["data_passes"]),
            "seconds": time.perf_counter() - start}


def evaluate(name, arm, step, data, cfg, n_runs):
    """``n_runs`` independent chains of one fit at the chosen step: curves, mixing, costs.

    The chains have their own noise and minibatch streams (``random_state=EVAL_SEED``); they
    share the arm's strata and the library's preprocessing, which are paid once.
    """
    Xtr, ytr, Xte, yte = data
    N = len(ytr)
    est = fit_sgld(Xtr, ytr, arm, step, cfg, chains=n_runs, seed=EVAL_SEED)
    if est is None:
        print(f"[{name} {arm}] diverged", flush=True)
        return {"runs": [{"diverged": True} for _ in range(n_runs)]}
    d, pre = est.diagnostics_, est.preprocessing_
    fit = {"sampling_passes_per_run": d["sampling_grad_evals"] / N / n_runs,
           "preprocessing_passes": d["preprocessing_grad_evals"] / N,
           "sampling_s_per_run": float(d["sampling_seconds"]) / n_runs,
           "preprocessing_s": float(d["preprocessing_seconds"]),
           "kmeans_s": float(pre.get("kmeans_seconds", 0.0)),
           "kmeans_iterations": int(pre.get("kmeans_iterations", 0)),
           "n_strata": int(pre.get("n_strata", 1)),
           "grad_noise": float(d["gradient_noise"])}
    runs = []
    for chain, tr in zip(est.draws_, trajectory(est, Xte, yte, cfg)):
        run = {"diverged": False, "logloss": tr["logloss"], "error": tr["error"],
               **mixing(chain, tr["trace"])}
        runs.append(run)
        print(f"[{name} {arm} run {len(runs)}] log-loss {run['logloss'][-1]:.4f} error "
              f"{run['error'][-1]:.4f} ESS(test LL) {run['ess_ll']:.1f} R-hat "
              f"{run['rhat_ll']:.3f}", flush=True)
    return {"runs": runs, **fit}


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
    finals = [np.mean([r["logloss"][-1] for r in _ok(out[arm]["runs"])])
              for arm in ARMS if _ok(out[arm]["runs"])]
    out["target"] = float(min(finals) + TARGET) if finals else None
    for arm in ARMS:
        for r in _ok(out[arm]["runs"]):
            r["passes_to_target"] = passes_to(r["logloss"], passes, out["target"])
    out["seconds"] = {"reference": t1 - t0, "tuning": t2 - t1,
                      "evaluation": time.perf_counter() - t2}
    return out


# ----------------------------------------------------------------------------------- report

def _ok(runs):
    return [r for r in runs if not r["diverged"]]


def _at(runs, key, j):
    return [r[key][j] for r in _ok(runs)]


def _ess_cell(runs):
    ok = _ok(runs)
    n_mixed = sum(r["mixed"] for r in ok)
    if not ok or n_mixed < len(runs):
        return f"not mixed ({n_mixed}/{len(runs)} runs)"
    return mean_sd([r["ess_ll"] for r in ok], ".0f")


def _passes_cell(runs):
    vals = [r["passes_to_target"] for r in _ok(runs)]
    finite = [v for v in vals if np.isfinite(v)]
    if not finite:
        return "> budget (all runs)"
    cell = mean_sd(finite, ".3g")
    return cell + (f"; {len(vals) - len(finite)} of {len(vals)} runs > budget"
                   if len(finite) < len(vals) else "")


def _speedup(res, arm):
    """``(ratio, se)``: uniform's mean passes to target / the arm's (delta-method se).

    Runs that never reach the target count as the budget B (so the ratio is then a bound).
    """
    def moments(a):
        v = np.array([min(r["passes_to_target"], res["passes"][-1])
                      for r in _ok(res[a]["runs"])])
        return v.mean(), (v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else 0.0)

    (mu, su), (ma, sa) = moments("uniform"), moments(arm)
    ratio = mu / ma
    return ratio, ratio * np.hypot(su / mu, sa / ma)


def _speedup_cell(res, arm):
    if arm == "uniform":
        return "1"
    ratio, se = _speedup(res, arm)
    return f"{ratio:.2f} ± {se:.2f}"


def _pick(passes, want):
    return int(np.argmin(np.abs(np.log(np.asarray(passes) / want))))


def _noise_ratio(res, arm):
    return res[arm]["grad_noise"] / res["uniform"]["grad_noise"]


def markdown(results, args, cfg, n_runs, elapsed):
    B = cfg["passes"]
    grid = ", ".join(f"{10 ** g:.3g}" for g in cfg["grid"])
    note = (
        "Protocol (seed 000 §4.1, as far as the paper states it): Bayesian softmax logistic "
        "regression (prior sd 1 on the weights, 10 on the intercepts), "
        f"**SGLD, minibatch {BATCH}, "
        "unpreconditioned (`preconditioner=None`), cold start `init=\"zeros\"`** (uniform "
        "predictions; the same start for every arm and run, so only the gradient estimator "
        "differs — prior draws would add start-to-start variance unrelated to the estimator). "
        f"**{n_runs} runs per arm** = {n_runs} independent chains of one fit (`random_state="
        f"{EVAL_SEED}`; each chain has its own noise and minibatch streams; the strata are "
        "clustered once per arm for them, and independently again for the tuning), "
        f"**{B} sampling data passes per run**, every step kept (thinned to "
        f"≤ {cfg['n_store']} draws), nothing discarded by the library. Arms: `uniform`; the "
        "paper's CP-SGLD `Stratified(n_clusters=10, features=\"x\")`; the library default "
        "`Stratified()` (k = 20, clustered within each class; with more than 20 classes one "
        "stratum per class).\n\n"
        "**Step tuned per arm** (the paper: \"we optimize the learning rate for each method\"; "
        "its criterion is not stated): step = c / λ0, λ0 the largest curvature of the "
        "log-likelihood at the start (λmax(X1ᵀX1)/K; /4 for binary; X1 = features and intercept "
        f"column). c starts on the half-decade grid {grid} and is extended by half decades "
        f"(at most {cfg['max_extend']} each way) while the choice sits at an edge. Criterion: "
        "**validation "
        f"log-loss of the posterior-predictive average after {B} passes** (window [B/2, B]; "
        f"{cfg['tune_chains']} chains, seed {TUNE_SEED}, fitted on "
        f"{100 - 100 * cfg['val_fraction']:.0f}% of the training rows, scored on the other "
        f"{100 * cfg['val_fraction']:.0f}%); the smallest value wins. The chosen c is then used "
        "with λ0 of the full training set.\n\n"
        "**Metrics** (the paper's Figures 1/5 and Table 2): test log-loss and test error of the "
        "running posterior-predictive average of the draws between p/2 and p sampling passes "
        "(the first half discarded as burn-in), against p. *Passes to target*: first p at which "
        f"that log-loss is within {TARGET:g} nats of the best arm's mean log-loss at {B} passes "
        "(one target per data set, the same for every arm; *speed-up* = uniform's mean passes / "
        "the arm's). *ESS*: bulk ESS of the per-draw mean test log-likelihood over the second "
        f"half of the run ({B // 2} passes), printed only if **every** run mixed there (split "
        f"R-hat ≤ {RHAT_MAX} and ESS ≥ {ESS_MIN}), else \"not mixed (m/n runs)\": a number from "
        "an unmixed chain measures nothing. *Coords mixed*: share of parameters with split "
        f"R-hat ≤ {RHAT_MAX} and ESS ≥ {ESS_MIN} over the second half. *Grad noise*: the "
        "library's measured minibatch gradient noise (`diagnostics_[\"gradient_noise\"]`, at "
        "Laplace draws around the mode, i.e. near stationarity) relative to uniform's.\n\n"
        "**Cost**: the x axis and every efficiency figure are sampling data passes "
        "(per-example gradient evaluations / N, `diagnostics_[\"sampling_grad_evals\"]`), equal "
        "for every arm by construction (each stratified step also evaluates b = 100 gradients). "
        "k-means (≤ 5 Lloyd iterations over X plus one assignment pass, no gradients) and "
        "the library's mode/Laplace preprocessing (run by `fit` even for a cold unpreconditioned "
        "chain, identical for every arm and not used by it) are listed separately and enter no "
        "efficiency figure. Seconds are secondary: the 2-core machine was shared with another "
        "benchmark during the run. The reference line is the library's default fit "
        "(Laplace-preconditioned, warm-started), context only; where its R-hat exceeds "
        f"{RHAT_MAX} it is marked as not converged.")
    lines = [header("Stratified (CP-SGLD) vs uniform minibatches, seed paper 000, paper's "
                    "protocol", args, seeds=[EVAL_SEED], repeats=n_runs, note=note)]
    lines += headline(results, cfg)
    for name, res in results.items():
        lines += dataset_section(name, res, cfg)
    lines.append("Run time per data set (s, reference / tuning / evaluation): " + "; ".join(
        f"{n} {r['seconds']['reference']:.0f} / {r['seconds']['tuning']:.0f} / "
        f"{r['seconds']['evaluation']:.0f}" for n, r in results.items())
                 + f". Total: {elapsed:.0f} s.")
    return "\n".join(lines) + "\n"


def headline(results, cfg):
    B = cfg["passes"]
    passes = next(iter(results.values()))["passes"]
    j10 = _pick(passes, B / 10)
    lines = ["### Headline", "",
             f"Mean over runs; log-loss / error of the running average at {passes[j10]:.3g} and "
             f"{B} sampling passes; c = tuned step × λ0 ((edge) = best at the end of the "
             "extended grid); passes to target mean ± sd over runs; speed-up = uniform's mean "
             "passes to target / the arm's, ± its standard error; ESS of the test log-likelihood "
             f"over the second half, i.e. per {B} sampling passes (burn-in included in the cost).",
             "",
             f"| data | arm | c | log-loss @{passes[j10]:.3g} | log-loss @{B} | "
             f"error @{passes[j10]:.3g} | error @{B} | passes to target | speed-up | "
             f"ESS per {B} passes |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        for arm in ARMS:
            runs = res[arm]["runs"]
            if not _ok(runs):
                lines.append(f"| {name} | {arm} | {res[arm]['c']:.3g} | all runs diverged "
                             "| | | | | | |")
                continue
            edge = " (edge)" if res["tuning"][arm]["at_edge"] else ""
            lines.append(
                f"| {name} | {arm} | {res[arm]['c']:.3g}{edge} | "
                f"{np.mean(_at(runs, 'logloss', j10)):.4f} | "
                f"{np.mean(_at(runs, 'logloss', -1)):.4f} | "
                f"{np.mean(_at(runs, 'error', j10)):.4f} | "
                f"{np.mean(_at(runs, 'error', -1)):.4f} | {_passes_cell(runs)} | "
                f"{_speedup_cell(res, arm)} | {_ess_cell(runs)} |")
    lines.append("")
    return lines


def dataset_section(name, res, cfg):
    B, passes = cfg["passes"], res["passes"]
    lines = [f"### {name} (N={res['n_train']}, d={res['n_features']}, K={res['n_classes']}, "
             f"test rows {res['n_test']})", ""]
    if res["note"]:
        lines += [f"Data: {res['note']}.", ""]
    lines += [f"Paper (SGLD → CP-SGLD, 5 runs): {res['paper']}.", ""]
    ref = res["reference"]
    if ref:
        verdict = "" if ref["converged"] else " — **not converged**, context only"
        lines += [f"Reference (library default fit): test log-loss {ref['logloss']:.4f}, error "
                  f"{ref['error']:.4f}, max R-hat {ref['rhat_max']:.3f}{verdict}; "
                  f"{ref['data_passes']:.0f} data passes, {ref['seconds']:.1f} s.", ""]
    lines += [f"Target log-loss (best arm at {B} passes + {TARGET:g}): {res['target']:.4f}.", ""]
    tun = res["tuning"]
    cs = sorted({s["c"] for arm in ARMS for s in tun[arm]["scores"]})
    lines += [f"Step tuning (λ0 = {tun['lambda0']:.4g} on {tun['n_fit']} rows; validation "
              f"log-loss after {B} passes on {tun['n_val']} rows; * = chosen, ∞ = diverged, "
              "blank = not run):", "",
              "| arm | " + " | ".join(f"c={c:.3g}" for c in cs) + " |",
              "|---|" + "---|" * len(cs)]
    for arm in ARMS:
        by_c = {s["c"]: s for s in tun[arm]["scores"]}
        cells = []
        for c in cs:
            s = by_c.get(c)
            cells.append("" if s is None else ("∞" if s["diverged"] else
                                                f"{s['val_logloss']:.4f}")
                         + ("*" if s is not None and c == tun[arm]["c"] else ""))
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    lines += ["", f"Evaluation at the chosen steps (λ0 = {res['lambda0']:.4g}), mean ± sd over "
              "runs:", ""]
    picks = sorted({_pick(passes, B / 10), _pick(passes, B / 3), len(passes) - 1})
    cols = ([f"log-loss @{passes[j]:.3g}" for j in picks]
            + [f"error @{passes[j]:.3g}" for j in picks])
    lines += ["| arm | step | " + " | ".join(cols) + " | passes to target | ESS (test LL) | "
              "coords mixed | grad noise vs uniform | sampling passes per run | sampling s per "
              "run | k-means s (Lloyd it.) | strata | preproc. passes (s) |",
              "|---|---|" + "---|" * (len(cols) + 9)]
    for arm in ARMS:
        runs = res[arm]["runs"]
        ok = _ok(runs)
        if not ok:
            lines.append(f"| {arm} | {res[arm]['step']:.3g} | all runs diverged |")
            continue
        cells = ([mean_sd(_at(runs, "logloss", j), ".4f") for j in picks]
                 + [mean_sd(_at(runs, "error", j), ".4f") for j in picks])
        fit = res[arm]
        km = (f"{fit['kmeans_s']:.2f} ({fit['kmeans_iterations']})" if arm != "uniform"
              else "–")
        lines.append(
            f"| {arm} | {fit['step']:.3g} | " + " | ".join(cells)
            + f" | {_passes_cell(runs)} | {_ess_cell(runs)} | "
            f"{mean_sd([r['coords_mixed'] for r in ok], '.2f')} | "
            f"{_noise_ratio(res, arm):.2f} | {fit['sampling_passes_per_run']:.1f} | "
            f"{fit['sampling_s_per_run']:.2f} | {km} | {fit['n_strata']} | "
            f"{fit['preprocessing_passes']:.0f} ({fit['preprocessing_s']:.1f}) |")
    lines.append("")
    return lines


def figure(results, cfg):
    def draw(plt):
        names = list(results)
        fig, axes = plt.subplots(2, len(names), figsize=(3.3 * len(names), 6.2), squeeze=False)
        colors = dict(zip(ARMS, ["C0", "C1", "C2"]))
        for col, name in enumerate(names):
            res, passes = results[name], np.asarray(results[name]["passes"])
            ref = res["reference"]
            for row, key in enumerate(["logloss", "error"]):
                ax = axes[row, col]
                for arm in ARMS:
                    ok = _ok(res[arm]["runs"])
                    if not ok:
                        continue
                    v = np.array([r[key] for r in ok])
                    m, s = v.mean(axis=0), v.std(axis=0)
                    ax.plot(passes, m, color=colors[arm], label=f"{arm} (c={res[arm]['c']:.3g})")
                    ax.fill_between(passes, m - s, m + s, color=colors[arm], alpha=0.2)
                if ref:
                    ax.axhline(ref[key], color="k", ls="--" if ref["converged"] else ":",
                               lw=0.8, label="default fit" + ("" if ref["converged"]
                                                              else " (not converged)"))
                if row == 0 and res["target"] is not None:
                    ax.axhline(res["target"], color="grey", lw=0.6, label="target")
                ax.set_xscale("log")
                ax.set_xlabel("sampling data passes")
                if col == 0:
                    ax.set_ylabel({"logloss": "test log-loss", "error": "test error"}[key]
                                  + "\n(running average, window [p/2, p])")
                if row == 0:
                    ax.set_title(name, fontsize=9)
                    finals = [np.mean(_at(res[a]["runs"], "logloss", -1)) for a in ARMS
                              if _ok(res[a]["runs"])]
                    if finals:
                        lo = min(finals + ([ref["logloss"]] if ref else []))
                        ax.set_ylim(lo - 0.02, lo + max(0.15, 0.25 * lo))
                ax.legend(fontsize=5.5)
        fig.suptitle(f"SGLD from zeros, batch {BATCH}, step tuned per arm: uniform vs "
                     "stratified minibatches (mean ± sd over runs)", fontsize=10)
        fig.tight_layout()
        return fig
    return draw


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
