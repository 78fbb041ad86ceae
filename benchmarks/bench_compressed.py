"""Compressed (clustered) posteriors over a grid of radii against mean-field VB, seed 003 Table 3.

Song (2022), "Approximate inference via clustering": every cluster of radius ``<= delta``
(normalised units, data divided by ``R = max ||x_i||``) is replaced by its centroid with
multiplicity ``n_j``; Table 3 compares ``KL(p || p~)`` with ``KL(p || q)`` of a mean-field
(diagonal-Gaussian) variational approximation ``q``.  Here, for each data set, both clusterings
of ``Compressed(radius=delta, clustering=...)`` (``"bisect"``: bisecting 2-means;
``"sequential"``: the paper's Algorithm 1) over a grid of ``delta``, 3 seeds each:

* linear regression (cadata, the paper's set; casp extra), noise fixed to the least-squares
  residual sd, no intercept, ``prior_scale=1`` on standardized X and y: the exact posterior
  ``p = N(mu, Sigma)``, the compressed posterior ``p~`` (Gaussian, from the centroids and
  multiplicities of the fit's own clustering) and mean-field VB ``q = prod_j N(mu_j, 1 /
  (Sigma^-1)_jj)`` (the minimiser of ``KL(q || p)``) are all closed form, so both KL directions
  are exact;
* every radius is also sampled by HMC (as in the paper) for the Gaussian-moment KL of the draws,
  test error and cost (data passes: preprocessing + sampling gradient evaluations / N);
* logistic regression (covtype_binary_subset20k): the reference is a long ``hmc + full`` run and
  "VB" is the mean-field fit to the reference's Gaussian (a proxy, see the notes).

    python benchmarks/bench_compressed.py [--quick] [--json PATH] [--markdown PATH] \
        [--data-dir DIR] [--plot PATH]
"""

import time

import numpy as np
from _common import cli, machine, quiet_fit, save_plot, write_json, write_markdown
from _compressed_report import CLUSTERINGS, figure, markdown
from _data import load

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression
from skbayes_sg.diagnostics import gaussian_kl
from skbayes_sg.models import GaussianLinearModel, GaussianPrior, Laplace, Posterior
from skbayes_sg.subsampling import Compressed
from skbayes_sg.utils import make_streams

# (data set, model, max training rows)
FULL = [("cadata", "linear", None), ("casp", "linear", None),
        ("covtype_binary_subset20k", "logistic", None)]
QUICK = [("cadata", "linear", 300), ("covtype_binary_subset20k", "logistic", 300)]
N_CHAINS = 4
SIZES = {"full": {"radii": {"linear": [0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.05, 0.1],
                            "logistic": [0.05, 0.1, 0.2, 0.4]},
                  "target_ratios": [0.5, 0.2, 0.1, 0.05], "seeds": 3, "n_warmup": 200,
                  "n_draws": 500},
         "quick": {"radii": {"linear": [0.1, 0.3], "logistic": [0.1, 0.3]},
                   "target_ratios": [0.5], "seeds": 1, "n_warmup": 50, "n_draws": 50}}


def exact_linear(X, y):
    """(noise sd, exact posterior mean, exact covariance) of the fixed-noise model."""
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    s = float(np.sqrt(resid @ resid / (X.shape[0] - X.shape[1])))
    cov = np.linalg.inv(X.T @ X / s**2 + np.eye(X.shape[1]))
    return s, cov @ X.T @ y / s**2, cov


def mean_field(mean, cov):
    """Mean-field VB of ``N(mean, cov)``: ``argmin_q KL(q || p)`` over diagonal Gaussians."""
    return mean, 1.0 / np.diag(np.linalg.inv(cov))


def both_kl(ref, mean, cov):
    """``(KL(p || a), KL(a || p))`` between the reference ``p`` and the Gaussian ``a``."""
    return (float(gaussian_kl(ref["mean"], ref["cov"], mean, cov)),
            float(gaussian_kl(mean, cov, ref["mean"], ref["cov"])))


def compressed_gaussian(strategy, data, ref, seed):
    """Closed-form compressed posterior of the fit with ``random_state=seed`` (same clustering).

    ``p~ = N(m~, P~^-1)``, ``P~ = sum_j n_j mu_j mu_j' / s^2 + I``, ``m~ = P~^-1 sum_j n_j y_j
    mu_j / s^2``; the fit's clustering uses the ``"strategy"`` stream of its ``random_state``.
    """
    X, y = data[0], data[1]
    d, s = X.shape[1], ref["noise_std"]
    pb = Posterior(GaussianLinearModel(d, False, noise_std=s), GaussianPrior(np.ones(d)), X, y)
    est = strategy.build(pb, Laplace(ref["mean"], ref["cov"]), batch_size=100,
                         rng=make_streams(seed, N_CHAINS).child("strategy"))
    small = est.posterior
    Xw = small.X.T * small.weight
    cov = np.linalg.inv(Xw @ small.X / s**2 + np.eye(d))
    mean = cov @ (Xw @ small.y) / s**2
    return mean, cov, est.outputs


def make(model, subsampling, seed, size, noise_std=None, draws_factor=1):
    common = {"sampler": "hmc", "subsampling": subsampling, "n_warmup": size["n_warmup"],
              "n_draws": draws_factor * size["n_draws"], "n_chains": N_CHAINS, "n_jobs": 1,
              "random_state": seed}
    if model == "linear":
        return BayesianLinearRegression(noise_std=noise_std, fit_intercept=False, **common)
    return BayesianLogisticRegression(**common)


def moments(est):
    draws = est.draws_.reshape(-1, est.draws_.shape[-1])
    return draws.mean(0), np.cov(draws, rowvar=False)


def test_error(est, model, X, y):
    if model == "linear":
        return float(np.sqrt(np.mean((est.predict(X) - y) ** 2)))
    return 100.0 * float(np.mean(est.predict(X) != y))


def fit_row(model, clustering, radius, seed, size, data, ref):
    Xtr, ytr, Xte, yte = data
    sub = "full" if radius == 0 else Compressed(radius=radius, clustering=clustering)
    est = make(model, sub, seed, size, noise_std=ref.get("noise_std"))
    fit_s = quiet_fit(est, Xtr, ytr)[1]
    d, pre = est.diagnostics_, est.preprocessing_
    row = {"clustering": clustering, "radius": radius, "seed": seed, "fit_s": fit_s,
           "compression_ratio": float(pre.get("compression_ratio", 1.0)),
           "n_centroids": int(pre.get("n_centroids", len(ytr))),
           "max_cluster_radius": float(pre.get("compression_radius", 0.0)),
           "kl_hmc": float(gaussian_kl(ref["mean"], ref["cov"], *moments(est))),
           "test_error": test_error(est, model, Xte, yte),
           "clustering_s": float(pre.get("compression_seconds", 0.0)),
           "sampling_s": float(d["sampling_seconds"]), "data_passes": float(d["data_passes"]),
           "n_grad_evals": int(d["n_grad_evals"]), "max_rhat": float(np.nanmax(d["rhat"]))}
    if model == "linear":
        mean, cov, out = (ref["mean"], ref["cov"], {}) if radius == 0 else \
            compressed_gaussian(sub, data, ref, seed)
        assert out.get("n_centroids", row["n_centroids"]) == row["n_centroids"]  # same clusters
        row["kl"], row["kl_rev"] = both_kl(ref, mean, cov)
    return row


def reference(model, data, size):
    """The exact posterior (linear) or a long hmc + full reference run (logistic), and VB."""
    Xtr, ytr, Xte, yte = data
    if model == "linear":
        s, mean, cov = exact_linear(Xtr, ytr)
        ref = {"kind": "closed form", "noise_std": s, "mean": mean, "cov": cov}
    else:
        est = make(model, "full", 1000, size, draws_factor=4)
        seconds = quiet_fit(est, Xtr, ytr)[1]
        mean, cov = moments(est)
        ref = {"kind": f"hmc + full, {N_CHAINS} chains x {4 * size['n_draws']} draws, seed 1000",
               "mean": mean, "cov": cov, "seconds": seconds,
               "max_rhat": float(np.nanmax(est.diagnostics_["rhat"]))}
    vb_mean, vb_var = mean_field(mean, cov)
    ref["vb_kl"], ref["vb_kl_rev"] = both_kl(ref, vb_mean, vb_var)
    if model == "linear":  # VB's mean is the exact mean: its predictions are the exact ones
        ref["vb_test_error"] = float(np.sqrt(np.mean((Xte @ vb_mean - yte) ** 2)))
    return ref


def target_rows(data, ref, size):
    """Secondary knob: ``Compressed(target_ratio=r)`` (bisect), closed-form KL only."""
    rows = []
    for ratio in size["target_ratios"]:
        mean, cov, out = compressed_gaussian(Compressed(target_ratio=ratio), data, ref, 0)
        kl, kl_rev = both_kl(ref, mean, cov)
        rows.append({"target_ratio": ratio, "compression_ratio": out["compression_ratio"],
                     "max_cluster_radius": out["compression_radius"], "kl": kl,
                     "kl_rev": kl_rev, "clustering_s": out["compression_seconds"]})
    return rows


def run_task(task, args, size):
    name, model, max_rows = task
    Xtr, ytr, Xte, yte, _ = load(name, args.data_dir, quick=args.quick, max_rows=max_rows)
    data = (Xtr, ytr, Xte, yte)
    ref = reference(model, data, size)
    grid = [("exact", 0.0)] + [(c, r) for c in CLUSTERINGS for r in size["radii"][model]]
    rows = []
    for clustering, radius in grid:
        for seed in range(size["seeds"]):
            r = fit_row(model, clustering, radius, seed, size, data, ref)
            rows.append(r)
            print(f"[{name} {clustering} delta={radius} seed {seed}] ratio "
                  f"{r['compression_ratio']:.4f} KL {r.get('kl', np.nan):.4g} (HMC "
                  f"{r['kl_hmc']:.4g}) err {r['test_error']:.4g} {r['fit_s']:.1f}s", flush=True)
    ref_out = {k: v for k, v in ref.items() if k not in ("mean", "cov")}
    return {"model": model, "n_train": len(ytr), "n_test": len(yte), "n_features": Xtr.shape[1],
            "reference": ref_out, "rows": rows,
            "target_ratio_rows": target_rows(data, ref, size) if model == "linear" else []}




def main():
    args = cli(__doc__)
    size = SIZES["quick" if args.quick else "full"]
    start = time.perf_counter()
    results = {task[0]: run_task(task, args, size) for task in (QUICK if args.quick else FULL)}
    elapsed = time.perf_counter() - start
    print(f"[done] {elapsed:.1f} s")
    write_json(args.json, {"machine": machine(), "seconds": elapsed, "sizes": size,
                           "results": results})
    write_markdown(args.markdown, markdown(results, args, size)
                   + f"\nTotal run time: {elapsed:.0f} s.\n")
    save_plot(figure(results), args.plot)


if __name__ == "__main__":
    main()
