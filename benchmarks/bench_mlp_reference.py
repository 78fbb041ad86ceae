"""Bayesian MLPs against a long full-batch NUTS reference (issue 36, item 1).

As Izmailov, Vikram, Hoffman & Wilson (2021), "What are Bayesian neural network posteriors
really like?": a Metropolis-corrected full-batch reference (NumPyro NUTS, diagonal mass adapted
in warm-up, several chains from independent Glorot starts, on exactly the library's potential,
checked value and gradient, ``_mlp_reference.py``) on four problems cheap enough for 2 cores:

* ``digits``: StandardScaler, stratified 75/25 split (seed 0), 64-32-10 relu classifier;
* ``moons``: ``make_moons(300, noise=0.25)``, 500 held-out rows, 2-16-16-2 relu classifier;
* ``cadata``: 1,000 training / 250 held-out rows of the shared set, standardized, 8-50-1 relu
  regressor with inferred noise (``BayesianMLPRegressor``'s model and noise prior).
* ``sine``: ``sin(2x)`` plus noise of sd 0.1 at 300 points of ``[-2, 2]``, 1-16-1 tanh
  regressor; held out, a grid on ``[-6, 6]``: whether the predictive sd grows away from the data.

Each method is scored on the held-out rows with the NeurIPS 2021 approximate-inference
competition's metrics against the reference (agreement and total variation; for regression a
Wasserstein-2 analogue, ``_mlp_ref_eval.py``), beside accuracy, NLL, ECE and fit seconds.  The
reference's split-half metrics (chains 0..C/2-1 against the rest) are the noise floor.  Methods:
the library's default, ``MLPClassifier`` / ``MLPRegressor``, a deep ensemble of five, and the
variants of ``VARIANTS`` (add more with ``--variant 'NAME={"n_chains": 4}'``, keyword
arguments of the library's estimator as JSON).

    python benchmarks/bench_mlp_reference.py [--quick] [--cache-dir DIR] [--problems digits ...]
        [--seeds 8] [--variant NAME=JSON ...] [--json P] [--markdown P]
"""

import json
import os
import time
import warnings

import numpy as np
from sklearn.neural_network import MLPClassifier, MLPRegressor

from _common import header, mean_sd, quiet_fit, save_plot, write_json, write_markdown
from _mlp_ref_eval import (PROBLEMS, boundary_figure, classification_metrics, noise_floor,
                           reference_metrics, reference_predictive, regression_metrics,
                           summarize_reference)
from _mlp_reference import get_reference, library_estimator, reference_cli

#: per problem: NUTS settings (chains, warm-up, draws of which every ``thin``-th is kept, tree
#: depth cap); chosen so that each reference takes at most ~10 min on the shared 2-core machine
SETTINGS = {
    "digits": {"chains": 8, "warmup": 400, "draws": 400, "thin": 2, "max_tree_depth": 7,
               "target_accept": 0.8},
    "moons": {"chains": 8, "warmup": 500, "draws": 500, "thin": 2, "max_tree_depth": 8,
              "target_accept": 0.8},
    "cadata": {"chains": 8, "warmup": 500, "draws": 500, "thin": 2, "max_tree_depth": 8,
               "target_accept": 0.8},
    "sine": {"chains": 8, "warmup": 1000, "draws": 1000, "thin": 4, "max_tree_depth": 8,
             "target_accept": 0.8},
}
QUICK_SETTINGS = {"chains": 4, "warmup": 20, "draws": 10, "thin": 1, "max_tree_depth": 4,
                  "target_accept": 0.8}
QUICK_FIT = {"n_warmup": 50, "n_draws": 20, "thin": 2, "max_doublings": 0}

#: name -> problem -> extra keyword arguments of the library's estimator
VARIANTS = {
    "2 chains x 200 draws / 10 (old default)": lambda p: {"n_chains": 2, "n_draws": 200,
                                                          "thin": 10},
    "n_chains=8": lambda p: {"n_chains": 8},
    "prior_scale=0.5": lambda p: {"prior_scale": 0.5},
    "prior_scaling=fan_in": lambda p: {"prior_scaling": "fan_in"},
    "prior_scaling=fan_in, prior_scale=4": lambda p: {"prior_scaling": "fan_in",
                                                       "prior_scale": 4.0},
    "4x longer": lambda p: {k: 4 * v for k, v in library_estimator(p).get_params().items()
                            if k in ("n_warmup", "thin")},
}


def _fit_library(problem, seed, kwargs, quick):
    est = library_estimator(problem, random_state=seed)
    est.set_params(**{**(QUICK_FIT if quick else {}), **kwargs})
    est, seconds = quiet_fit(est, problem.X, problem.y)
    d = est.diagnostics_
    info = {"converged": bool(d["converged"]), "n_doublings": int(d["n_doublings"]),
            "pooled_error": float(d["pooled_error"])}
    predict = ((lambda X: est.predict(X, return_std=True)) if problem.kind == "regressor"
               else est.predict_proba)
    return predict(problem.X_test), seconds, info, predict


def _sk_nets(problem, seeds, quick):
    cls = MLPRegressor if problem.kind == "regressor" else MLPClassifier
    nets, seconds = [], 0.0
    for s in seeds:
        net, sec = quiet_fit(cls(hidden_layer_sizes=problem.hidden,
                                 activation=problem.activation,
                                 max_iter=20 if quick else 200, random_state=s),
                             problem.X, problem.y)
        nets.append(net)
        seconds += sec
    if problem.kind != "regressor":
        def predict(X):
            return np.mean([n.predict_proba(X) for n in nets], axis=0)
    else:  # one net: noise sd = training residual sd; an ensemble adds the members' variance
        noise_var = np.var(problem.y - np.mean([n.predict(problem.X) for n in nets], axis=0))

        def predict(X):
            out = np.array([n.predict(X) for n in nets])
            return out.mean(axis=0), np.sqrt(noise_var + out.var(axis=0))
    return predict(problem.X_test), seconds, {}, predict


def methods(problem, extra):
    """name -> ``(seed, quick) -> (held-out prediction, seconds, info, X -> prediction)``."""
    sk = "MLPRegressor" if problem.kind == "regressor" else "MLPClassifier"
    out = {"library default": lambda s, q: _fit_library(problem, s, {}, q),
           sk: lambda s, q: _sk_nets(problem, [s], q),
           "deep ensemble (5)": lambda s, q: _sk_nets(problem, range(5 * s, 5 * s + 5), q)}
    for name, make in {**VARIANTS, **extra}.items():
        out[f"library {name}"] = (lambda make: lambda s, q: _fit_library(
            problem, s, make(problem), q))(make)
    return out


def score(problem, pred, ref):
    if problem.kind == "regressor":
        return regression_metrics(*pred, problem.y_test, ref)
    return classification_metrics(pred, problem.y_test, ref)


def run_problem(name, args, extra):
    problem = PROBLEMS[name](args.quick, args.data_dir)
    settings = QUICK_SETTINGS if args.quick else SETTINGS[name]
    theta, info = get_reference(problem, settings, args.cache_dir)
    pred = reference_predictive(problem, theta)
    ref, rhat = summarize_reference(problem, pred)
    out = {"problem": problem.spec(), "reference": {**info, **rhat,
                                                    **reference_metrics(problem, ref)},
           "noise_floor": noise_floor(problem, pred), "methods": {}}
    predictors = {}
    for method, fn in methods(problem, extra).items():
        runs = []
        for seed in range(args.seeds):
            p, seconds, meta, predict = fn(seed, args.quick)
            runs.append({**score(problem, p, ref), "seconds": seconds, **meta})
            predictors.setdefault(method, predict)
        out["methods"][method] = runs
        print(f"[{name}] {method}: " + ", ".join(
            f"{k} {np.mean([r[k] for r in runs]):.4g}" for k in runs[0] if k != "converged"),
            flush=True)
    if problem.X.shape[1] == 2 and problem.kind == "classifier":  # the decision boundary
        shown = {k: predictors[k] for k in list(predictors)[:3]}
        save_plot(lambda plt: boundary_figure(plt, problem, theta, shown), args.plot)
    return out


COLUMNS = {"classifier": (("agreement", ".3f"), ("tv", ".3f"), ("accuracy", ".3f"),
                          ("nll", ".3f"), ("ece", ".3f")),
           "regressor": (("w2", ".3f"), ("tv", ".3f"), ("mean_shift", ".3f"), ("sd_ratio", ".3f"),
                         ("rmse", ".3f"), ("loglik", ".3f"))}
HEADS = {"classifier": "agreement ↑ | TV ↓ | accuracy | NLL | ECE",
         "regressor": "W2 ↓ | TV ↓ | mean shift / ref sd ↓ | sd ratio | RMSE | log-lik / row"}


def table(name, res):
    kind = res["problem"]["kind"]
    cols = COLUMNS[kind]
    sk = [v for k, v in res["methods"].items() if k.startswith("MLP")][0]
    base = np.median([r["seconds"] for r in sk])
    lines = [f"### {name} ({kind}, units {res['problem']['units']}, "
             f"{res['problem']['n_train']} train / {res['problem']['n_test']} held-out rows)", "",
             f"| method | {HEADS[kind]} | median fit s (× scikit-learn net) | "
             "library converged |", "|---|" + "---|" * (len(cols) + 2)]
    ref, floor = res["reference"], res["noise_floor"]
    lines.append("| reference (NUTS, all chains) | " + " | ".join(
        "—" if k in ("agreement", "tv", "w2", "mean_shift", "sd_ratio") else format(ref[k], f)
        for k, f in cols) + f" | {ref['seconds']:.0f} s | — |")
    lines.append("| noise floor (split halves) | " + " | ".join(
        format(floor[k], f) for k, f in cols) + " | — | — |")
    for method, runs in res["methods"].items():
        vals = " | ".join(mean_sd([r[k] for r in runs], f) for k, f in cols)
        secs = np.median([r["seconds"] for r in runs])
        conv = [r["converged"] for r in runs if "converged" in r]
        lines.append(f"| {method} | {vals} | {secs:.2f} ({secs / base:.1f}×) "
                     f"| {f'{sum(conv)}/{len(conv)}' if conv else '—'} |")
    return lines


def ref_lines(results):
    lines = ["| problem | prior (weight sds; bias sds) | NUTS settings | build seconds | mean "
             "leapfrog / draw | tree-depth cap hit | divergences | R-hat on held-out "
             "predictive: median / max / share > 1.1 | potential check |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        r, p = res["reference"], res["problem"]
        s = r["settings"]
        sds = ", ".join(f"{v:.3g}" for v in p["weight_sds"]) + "; " + ", ".join(
            f"{v:.3g}" for v in p["bias_sds"])
        lines.append(
            f"| {name} | {p['prior']} ({sds}) | {s['chains']} chains × ({s['warmup']} warm-up + "
            f"{s['draws']} draws, {s['draws'] // s['thin']} kept), "
            f"depth ≤ {s['max_tree_depth']} | "
            f"{r['seconds']:.0f}{' (cached)' if r.get('from_cache') else ''} | "
            f"{r['mean_leapfrog']:.0f} | {r['max_depth_hits']:.0%} | "
            f"{r['divergences']} | {r['rhat_median']:.3f} / {r['rhat_max']:.3f} / "
            f"{r['rhat_frac_over_1.1']:.0%} | {r['potential_check']:.1e} |")
    return lines


NOTE = ("Metrics on held-out rows against the reference's pooled predictive (mean ± sd over "
        "the seeds of each method). Classification: agreement = share of rows whose top class "
        "matches the reference's, TV = mean total variation 0.5 Σ|p − p_ref|, ECE with 15 bins. "
        "Regression (y standardized on the training rows): W2 = mean Wasserstein-2 distance "
        "between the method's Gaussian predictive N(m, s²) and the reference's (mixture mean "
        "and sd, noise included), mean shift = mean |m − m_ref| / s_ref, sd ratio = median "
        "s / s_ref; the reference's log-likelihood is its exact mixture's. The noise floor is "
        "one half of the reference's chains scored against the other half. Fit seconds are "
        "wall seconds of `fit` (the ensemble: its five members' sum), the median over seeds, "
        "with the ratio to the scikit-learn network's median in the same run: the machine was "
        "shared (single fits moved 2-8x with the load), so only the ratios mean anything, "
        "roughly. `prior_scale=0.5` and the fan-in priors sample other posteriors than the "
        "reference's (library default prior) and are scored against it all the same: their "
        "NLL and ECE are the evidence for the prior. \"library converged\": the fits whose "
        "verdict (the pooled predictive's Monte-Carlo error, at most 0.02) passed.")


def main():
    args = reference_cli(__doc__, "mlp-reference", (1, 8),
                         variant={"action": "append", "default": [], "help": "NAME=JSON kwargs"})
    if args is None:
        return
    extra = {}
    for v in args.variant:
        name, kw = v.split("=", 1)
        extra[name] = (lambda kw: lambda p: kw)(json.loads(kw))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = {name: run_problem(name, args, extra) for name in args.problems}
    minutes = (time.perf_counter() - t0) / 60
    lines = [header("Bayesian MLPs against a full-batch NUTS reference", args,
                    seeds=list(range(args.seeds)), repeats=args.seeds, note=NOTE)]
    lines += [f"Whole run: {minutes:.1f} min (references from the cache where present).", ""]
    lines += ["References:", ""] + ref_lines(results) + [""]
    for name, res in results.items():
        lines += table(name, res) + [""]
    write_json(args.json, {"results": results, "minutes": minutes, "load": os.getloadavg()})
    write_markdown(args.markdown, "\n".join(lines))
    print("\n".join(lines[-40:]))


if __name__ == "__main__":
    main()
