"""Posterior predictive vs scikit-learn point estimates: accuracy, log-loss, calibration.

Usage::

    python benchmarks/bench_baselines.py --data-dir /work/shared/datasets \\
        --json benchmarks/results/bench_baselines.json \\
        --markdown benchmarks/results/bench_baselines.md

Issue 4, item 8.  Each Bayesian estimator runs with its defaults beside the
scikit-learn estimator a user would otherwise pick:

* ``BayesianLogisticRegression`` vs ``LogisticRegression`` (same L2 penalty:
  ``C = prior_scale**2``, the MAP of the same posterior);
* ``BayesianMLPClassifier`` vs ``MLPClassifier`` (same architecture, default
  ``alpha``, early stopping off);
* ``BayesianLinearRegression`` vs ``BayesianRidge``.

Classification: test accuracy, test log-loss, expected calibration error
(15 equal-width confidence bins, top-label).  Regression: test R², negative
log predictive density (the library's mixture over draws; ``BayesianRidge``'s
Gaussian) and the coverage of central 50% / 90% Gaussian predictive intervals
(predictive mean ± z sd).  Mean ± sd over seeds (random_state of the fit).
"""

import time

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm
from sklearn.linear_model import BayesianRidge, LogisticRegression
from sklearn.metrics import log_loss, r2_score
from sklearn.neural_network import MLPClassifier

from _common import cli, header, mean_sd, save_plot, write_json, write_markdown
from _data import load
from skbayes_sg import (BayesianLinearRegression, BayesianLogisticRegression,
                        BayesianMLPClassifier)

FULL = {"logistic": ["pendigits", "letter", "a9a", "covtype_binary_subset20k"],
        "mlp": ["usps", "mnist"], "linear": ["cadata", "casp"]}
QUICK = {"logistic": ["pendigits"], "mlp": ["usps"], "linear": ["cadata"]}
MLP_ROWS = 20_000  # mnist rows used for the MLPs (both sides), to fit the time box


def ece(proba, y, classes, n_bins=15):
    """Top-label expected calibration error with equal-width confidence bins."""
    conf = proba.max(axis=1)
    correct = classes[proba.argmax(axis=1)] == y
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    err = 0.0
    for b in np.unique(bins):
        m = bins == b
        err += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return float(err)


def classification_metrics(est, Xte, yte):
    proba = est.predict_proba(Xte)
    return {"accuracy": float(np.mean(est.classes_[proba.argmax(1)] == yte)),
            "log_loss": float(log_loss(yte, proba, labels=est.classes_)),
            "ece": ece(proba, yte, est.classes_)}


def _library_nlpd(est, Xte, yte):
    """Negative log predictive density of the library's mixture over posterior draws."""
    post = est.sample_posterior()
    mu = post["intercept"][:, None] + post["coef"] @ Xte.T
    sd = (post["noise_std"] if "noise_std" in post
          else np.full(len(mu), est.noise_std))[:, None]
    logp = norm.logpdf(yte[None, :], mu, sd)
    return float(-np.mean(logsumexp(logp, axis=0) - np.log(len(mu))))


def regression_metrics(est, Xte, yte):
    mean, std = est.predict(Xte, return_std=True)
    z = np.abs(yte - mean) / std
    nlpd = (_library_nlpd(est, Xte, yte) if hasattr(est, "sample_posterior")
            else float(-np.mean(norm.logpdf(yte, mean, std))))
    return {"r2": float(r2_score(yte, mean)), "nlpd": nlpd,
            "cover50": float(np.mean(z < norm.ppf(0.75))),
            "cover90": float(np.mean(z < norm.ppf(0.95)))}


def estimators(kind, seed):
    """(name, estimator) pairs compared on one data set."""
    if kind == "logistic":
        return [("BayesianLogisticRegression", BayesianLogisticRegression(random_state=seed)),
                ("LogisticRegression", LogisticRegression(C=1.0, max_iter=2000))]
    if kind == "mlp":
        return [("BayesianMLPClassifier", BayesianMLPClassifier(random_state=seed)),
                ("MLPClassifier", MLPClassifier(random_state=seed, max_iter=200))]
    return [("BayesianLinearRegression", BayesianLinearRegression(random_state=seed)),
            ("BayesianRidge", BayesianRidge())]


def run_one(est, data, kind):
    Xtr, ytr, Xte, yte = data
    t0 = time.perf_counter()
    est.fit(Xtr, ytr)
    row = {"fit_seconds": time.perf_counter() - t0}
    row.update(regression_metrics(est, Xte, yte) if kind == "linear"
               else classification_metrics(est, Xte, yte))
    diag = getattr(est, "diagnostics_", None)
    if diag is not None:
        row["data_passes"] = float(diag["data_passes"])
        row["max_rhat"] = float(np.nanmax(diag["rhat"]))
    return row


def run_dataset(kind, name, args, seeds):
    max_rows = 2000 if args.quick else (MLP_ROWS if kind == "mlp" else None)
    Xtr, ytr, Xte, yte, _ = load(name, args.data_dir, quick=args.quick, max_rows=max_rows)
    data = (Xtr, ytr, Xte, yte)
    runs = {}
    for seed in seeds:
        for ename, est in estimators(kind, seed):
            if ename.startswith("Bayesian") or seed == seeds[0] or ename == "MLPClassifier":
                if args.quick and kind == "mlp" and ename.startswith("Bayesian"):
                    est.set_params(n_warmup=100, n_draws=20, thin=1, hidden_layer_sizes=(20,))
                if args.quick and kind == "mlp" and ename == "MLPClassifier":
                    est.set_params(hidden_layer_sizes=(20,), max_iter=20)
                print(f"[{name}] {ename} seed {seed}", flush=True)
                runs.setdefault(ename, []).append(run_one(est, data, kind))
    return {"n_train": len(Xtr), "n_test": len(Xte), "n_features": Xtr.shape[1], "runs": runs}


METRICS = {"logistic": ["accuracy", "log_loss", "ece"], "linear": ["r2", "nlpd", "cover50",
                                                                    "cover90"]}
METRICS["mlp"] = METRICS["logistic"]
EXTRA = ["fit_seconds", "data_passes", "max_rhat"]


def markdown(results, args, seeds):
    note = ("Point estimates (scikit-learn, deterministic apart from `MLPClassifier`) run once "
            "per seed only where they are random. Bayesian fits use every default; "
            f"the MLPs use the first {MLP_ROWS:,} mnist training rows (both sides), "
            "full test sets. Lower is better for log-loss, ECE and NLPD; interval coverage "
            "should be near 0.50 / 0.90.")
    lines = [header("Posterior predictive vs point-estimate baselines", args,
                    seeds=", ".join(map(str, seeds)), repeats=len(seeds), note=note)]
    for kind, block in results.items():
        cols = METRICS[kind] + EXTRA
        lines += [f"### {kind}", "", "| data (N × p) | estimator | " + " | ".join(cols) + " |",
                  "|---|---|" + "---|" * len(cols)]
        for name, res in block.items():
            for ename, rows in res["runs"].items():
                cells = [mean_sd([r[c] for r in rows]) if c in rows[0] else "-" for c in cols]
                lines.append(f"| {name} ({res['n_train']:,} × {res['n_features']}) | {ename} | "
                             + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _figure(results):
    def draw(plt):
        kinds = [k for k in results if k != "linear"]
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        labels, bayes, point = [], {"log_loss": [], "ece": []}, {"log_loss": [], "ece": []}
        for kind in kinds:
            for name, res in results[kind].items():
                labels.append(name.split("_")[0])
                (b, p) = list(res["runs"].values())
                for m in ("log_loss", "ece"):
                    bayes[m].append(np.mean([r[m] for r in b]))
                    point[m].append(np.mean([r[m] for r in p]))
        x = np.arange(len(labels))
        for ax, m in zip(axes, ("log_loss", "ece")):
            ax.bar(x - 0.2, bayes[m], 0.4, label="skbayes_sg posterior predictive")
            ax.bar(x + 0.2, point[m], 0.4, label="scikit-learn point estimate")
            ax.set_xticks(x, labels, rotation=30)
            ax.set_title(f"test {m.replace('_', '-')} (lower is better)")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        return fig
    return draw


def main():
    args = cli(__doc__, seeds={"type": int, "default": 3, "help": "number of fit seeds"})
    seeds = list(range(1 if args.quick else args.seeds))
    plan = QUICK if args.quick else FULL
    results = {kind: {name: run_dataset(kind, name, args, seeds) for name in names}
               for kind, names in plan.items()}
    text = markdown(results, args, seeds)
    print(text)
    write_markdown(args.markdown, text)
    write_json(args.json, {"results": results, "seeds": seeds, "quick": args.quick})
    save_plot(_figure(results), args.plot)


if __name__ == "__main__":
    main()
