"""Bayesian MLP regression against MLPRegressor and a deep ensemble (the Bayesian MLP issue).

The protocol of Hernandez-Lobato & Adams (2015): random 90/10 train/test splits of casp (UCI
"protein", 45,730 x 9) and cadata (California housing, 20,640 x 8), X standardized on the
training rows, test RMSE and test log-likelihood per row in y's original units.  Three models
with one hidden layer of 50 units:

* ``BayesianMLPRegressor(hidden_layer_sizes=(50,), random_state=seed)`` (library defaults): the
  Gaussian predictive with mean and sd from ``predict(X, return_std=True)``; its verdict
  (``diagnostics_["converged"]``, the largest predictive R-hat) is reported too;
* ``MLPRegressor(hidden_layer_sizes=(50,), random_state=seed)``: a point estimate, its
  log-likelihood with the training residuals' sd as the noise sd;
* a deep ensemble of five ``MLPRegressor`` (seeds ``5 seed .. 5 seed + 4``): the members' mean,
  sd = sqrt(training residual variance of that mean + the members' variance).

The scikit-learn networks are fitted to y standardized with the training mean and sd (as the
library's ``normalize_y`` does; cadata's y is in dollars) and their predictions mapped back.

``--quick``: 2 splits of a 2,000-row subsample, tiny settings; a synthetic regression problem
stands in when a ``.npz`` is missing.

    python benchmarks/bench_mlp_regression.py [--quick] [--data-dir DIR] [--json P] [--markdown P]
"""

import os
import time

import numpy as np
from sklearn.neural_network import MLPRegressor

from _common import cli, header, load_npz, mean_sd, quiet_fit, write_json, write_markdown

from skbayes_sg import BayesianMLPRegressor

SETS = {"casp": 9, "cadata": 8}
FULL = {"splits": 5, "rows": None, "ours": {}, "sk": {"max_iter": 200}, "members": 5}
QUICK = {"splits": 2, "rows": 2_000,
         "ours": {"n_warmup": 50, "n_draws": 20, "thin": 2, "max_doublings": 0},
         "sk": {"max_iter": 10}, "members": 5}
MODELS = ("BayesianMLPRegressor", "MLPRegressor", "deep ensemble")


def synthetic(n_features, n=2_000, seed=0):
    """A smooth nonlinear regression problem with noise sd 0.3 (stand-in for a missing set)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3] + 0.3 * rng.normal(size=n)
    return X, 10.0 + 3.0 * y


def dataset(name, size, data_dir):
    """``(X, y, source)`` in float64, subsampled to ``size["rows"]`` rows when set."""
    arrays = load_npz(name, data_dir)
    if arrays is None:
        if size["rows"] is None:
            raise SystemExit(f"{name}.npz not found: pass --data-dir or set SKBAYES_SG_DATA")
        print(f"[data] {name}.npz not found; a synthetic problem stands in", flush=True)
        X, y = synthetic(SETS[name], size["rows"])
        return X, y, "synthetic"
    X, y = arrays["X_float64"].astype(float), arrays["y_float64"].astype(float)
    if size["rows"] is not None and size["rows"] < len(y):
        keep = np.random.default_rng(12345).choice(len(y), size["rows"], replace=False)
        X, y = X[keep], y[keep]
    return X, y, name


def split(X, y, seed):
    """A random 90/10 split, X standardized with the training rows' mean and sd."""
    perm = np.random.default_rng(seed).permutation(len(y))
    n_train = int(round(0.9 * len(y)))
    tr, te = perm[:n_train], perm[n_train:]
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    sd[sd == 0] = 1.0
    return (X[tr] - mu) / sd, y[tr], (X[te] - mu) / sd, y[te]


def scores(mean, sd, y):
    """Test RMSE and mean Gaussian log-likelihood per row."""
    ll = -0.5 * np.log(2 * np.pi * sd ** 2) - 0.5 * ((y - mean) / sd) ** 2
    return {"rmse": float(np.sqrt(np.mean((y - mean) ** 2))), "loglik": float(np.mean(ll))}


def ours(size, seed, Xtr, ytr, Xte, yte):
    est = BayesianMLPRegressor(hidden_layer_sizes=(50,), random_state=seed, **size["ours"])
    est, seconds = quiet_fit(est, Xtr, ytr)
    mean, sd = est.predict(Xte, return_std=True)
    d = est.diagnostics_
    rhat = d.get("predictive_rhat")
    max_rhat = None if rhat is None or np.all(np.isnan(rhat)) else float(np.nanmax(rhat))
    return {**scores(mean, sd, yte), "seconds": seconds, "converged": bool(d["converged"]),
            "max_predictive_rhat": max_rhat, "n_doublings": int(d["n_doublings"]),
            "doublings_needed": d["doublings_needed"],
            "data_passes": float(d["data_passes"]), "noise_std": est.noise_std_}


def sk_net(size, seed, Xtr, ytr):
    """An ``MLPRegressor`` fitted to standardized y: ``(predict in y's units, seconds, epochs)``."""
    mu, sd = ytr.mean(), ytr.std()
    net = MLPRegressor(hidden_layer_sizes=(50,), random_state=seed, **size["sk"])
    net, seconds = quiet_fit(net, Xtr, (ytr - mu) / sd)
    return (lambda X: net.predict(X) * sd + mu), seconds, int(net.n_iter_)


def point(size, seed, Xtr, ytr, Xte, yte):
    predict, seconds, epochs = sk_net(size, seed, Xtr, ytr)
    noise = float(np.std(ytr - predict(Xtr)))
    mean = predict(Xte)
    return {**scores(mean, np.full_like(mean, noise), yte), "seconds": seconds,
            "epochs": epochs, "hit_max_iter": epochs >= size["sk"]["max_iter"]}


def ensemble(size, seed, Xtr, ytr, Xte, yte):
    nets = [sk_net(size, size["members"] * seed + k, Xtr, ytr) for k in range(size["members"])]
    train = np.array([p(Xtr) for p, _, _ in nets])
    test = np.array([p(Xte) for p, _, _ in nets])
    resid_var = float(np.var(ytr - train.mean(axis=0)))
    sd = np.sqrt(resid_var + test.var(axis=0))
    return {**scores(test.mean(axis=0), sd, yte), "seconds": float(sum(s for _, s, _ in nets)),
            "epochs": [e for _, _, e in nets]}


RUNNERS = dict(zip(MODELS, (ours, point, ensemble)))


def run_set(name, size, data_dir):
    X, y, source = dataset(name, size, data_dir)
    runs = []
    for seed in range(size["splits"]):
        parts = split(X, y, seed)
        row = {"seed": seed}
        for model, fn in RUNNERS.items():
            row[model] = fn(size, seed, *parts)
            r = row[model]
            print(f"[{name} split {seed}] {model}: RMSE {r['rmse']:.4g}, loglik "
                  f"{r['loglik']:.4g}, {r['seconds']:.1f} s", flush=True)
        runs.append(row)
    return {"source": source, "n_rows": len(y), "n_features": X.shape[1], "runs": runs}


def table(results):
    lines = ["| data | model | test RMSE | test log-lik / row | fit s |", "|---|---|---|---|---|"]
    for name, res in results.items():
        for model in MODELS:
            vals = [run[model] for run in res["runs"]]
            cols = [mean_sd([v[k] for v in vals], ".4g") for k in ("rmse", "loglik")]
            lines.append(f"| {res['source']} ({res['n_rows']:,} x {res['n_features']}) | "
                         f"{model} | {cols[0]} | {cols[1]} | "
                         f"{mean_sd([v['seconds'] for v in vals], '.3g')} |")
    return lines


def verdicts(results):
    lines = ["", "| data | split | converged | max predictive R-hat | doublings (more projected) | "
             "data passes | noise sd | MLPRegressor epochs | ensemble epochs |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        for run in res["runs"]:
            o, p, e = (run[m] for m in MODELS)
            rhat = "n/a" if o["max_predictive_rhat"] is None else f"{o['max_predictive_rhat']:.3f}"
            more = "" if o["doublings_needed"] is None else f" ({o['doublings_needed']:.2g})"
            lines.append(f"| {res['source']} | {run['seed']} | {o['converged']} | {rhat} | "
                         f"{o['n_doublings']}{more} | {o['data_passes']:.0f} | "
                         f"{o['noise_std']:.4g} | {p['epochs']} | "
                         f"{', '.join(map(str, e['epochs']))} |")
    return lines


def markdown(results, size, args, minutes):
    note = (f"{size['splits']} random 90/10 splits per data set (seeds 0..{size['splits'] - 1}; "
            f"chosen so the whole run fits in ~10 minutes: it took {minutes:.1f} min), X "
            "standardized on the training rows; RMSE and Gaussian log-likelihood per test row in "
            "y's original units (mean ± sd over splits). One hidden layer of 50 units "
            "everywhere; the library at its defaults; `MLPRegressor` with its defaults (Adam, "
            f"max_iter={size['sk']['max_iter']}) on standardized y, noise sd = training residual "
            f"sd; the ensemble: {size['members']} `MLPRegressor`s, sd = sqrt(training residual "
            "variance + the members' variance); its fit seconds are the members' sum. Fit seconds "
            "are wall seconds of `fit` alone.")
    lines = [header("Bayesian MLP regression: casp and cadata", args,
                    seeds=list(range(size["splits"])), repeats=size["splits"], note=note)]
    lines += table(results) + ["", "The library's verdict per fit (`diagnostics_`):"]
    return "\n".join(lines + verdicts(results)) + "\n"


def main():
    args = cli(__doc__)
    size = QUICK if args.quick else FULL
    t0 = time.perf_counter()
    results = {name: run_set(name, size, args.data_dir) for name in SETS}
    minutes = (time.perf_counter() - t0) / 60
    write_json(args.json, {"results": results, "settings": {k: v for k, v in size.items()},
                           "minutes": minutes, "load": os.getloadavg()})
    write_markdown(args.markdown, markdown(results, size, args, minutes))
    print("\n".join(table(results)))


if __name__ == "__main__":
    main()
