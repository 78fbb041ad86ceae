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
import warnings

import numpy as np
from _common import cli, header, machine, mean_sd, save_plot, write_json, write_markdown
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
CLUSTERINGS = ("bisect", "sequential")
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
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xtr, ytr)
    fit_s = time.perf_counter() - t0
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
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(Xtr, ytr)
        mean, cov = moments(est)
        ref = {"kind": f"hmc + full, {N_CHAINS} chains x {4 * size['n_draws']} draws, seed 1000",
               "mean": mean, "cov": cov, "seconds": time.perf_counter() - t0,
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


def break_even(res, clustering, key, vb):
    """Smallest grid ``c/N`` whose mean KL is below VB's, and the log-log interpolated crossing."""
    pts = sorted((np.mean([r["compression_ratio"] for r in rs]), np.mean([r[key] for r in rs]))
                 for rs in _by_radius(res["rows"], clustering).values())
    below = [(c, k) for c, k in pts if k < vb]
    if not below:
        return None, None
    lo = min(below)
    above = [(c, k) for c, k in pts if c < lo[0] and k >= vb]
    if not above:
        return lo, None
    hi = max(above)
    t = (np.log(vb) - np.log(lo[1])) / (np.log(hi[1]) - np.log(lo[1]))
    return lo, float(np.exp(np.log(lo[0]) + t * (np.log(hi[0]) - np.log(lo[0]))))


def _by_radius(rows, clustering):
    out = {}
    for r in rows:
        if r["clustering"] == clustering:
            out.setdefault(r["radius"], []).append(r)
    return out


COLS = [("compression_ratio", "c/N", ".3g"), ("max_cluster_radius", "max radius", ".3g"),
        ("kl", "KL(p‖p~) exact", ".3g"), ("kl_rev", "KL(p~‖p) exact", ".3g"),
        ("kl_hmc", "KL(p‖p~) HMC draws", ".3g"), ("test_error", "test error", ".4g"),
        ("data_passes", "data passes", ".4g"), ("clustering_s", "clustering s", ".2g"),
        ("fit_s", "fit s", ".3g"), ("max_rhat", "max R-hat", ".3g")]

NOTE = (
    "Direction of every KL: p is the exact posterior (linear; closed form) or the reference run "
    "(logistic); p~ the compressed posterior; q mean-field VB. `KL(p‖·)` is the paper's direction "
    "(Theorem 1 bounds KL(π‖π~); Table 3 reports approxKL = KL(p‖p~) and KL(p‖q)); `KL(·‖p)` is "
    "the direction VB minimises. Linear regression: noise fixed to the least-squares residual sd, "
    "no intercept, prior_scale=1, standardized X and y; p, p~ and q are Gaussian, so the 'exact' "
    "columns are closed form (p~ from the centroids and multiplicities of the clustering that the "
    "HMC fit of the same seed used; no sampling), and VB is q = N(mu, diag(1/(Σ⁻¹)_jj)), the "
    "minimiser of KL(q‖p) over diagonal Gaussians (= CAVI's fixed point; it costs one data pass, "
    "X'X). 'KL(p‖p~) HMC draws' is the paper's estimator: Gaussian with the draws' mean and "
    "covariance (`hmc`, 4 chains x {draws} draws after {warmup} warm-up, inner `full`); its "
    "delta-0 row (uncompressed hmc + full) is the Monte-Carlo floor of that estimate. Logistic "
    "regression: no closed form, so only the HMC-draws KL, against a long hmc + full reference; "
    "'VB' there is the mean-field fit to the reference's Gaussian (N(m, S) -> diag(1/(S⁻¹)_jj)), "
    "a proxy for mean-field VB (exact VB for a Gaussian posterior) that carries no Monte-Carlo "
    "floor of its own, unlike the compressed rows. delta is in normalised units (R = max ||x_i||; "
    "for regression the clustered vectors are (x, y)/R). 'bisect' clusterings are deterministic; "
    "'sequential' (Algorithm 1) visits the rows in a random order from the fit's random_state, "
    "so its repeats vary the clustering too. Data passes = (preprocessing + sampling gradient "
    "evaluations) / N of the HMC fit; the clustering itself is not a gradient evaluation and is "
    "given in seconds (secondary: the 2-core machine was shared). Test error: RMSE on "
    "standardized y (regression), % misclassified (logistic). Scaled down from the paper: fewer "
    "draws, covtype is the 20k-row subset, {seeds} repeats (paper 5). The seed text's Table 3 "
    "has no numbers, so only the qualitative claim is checked.")


def markdown(results, args, size):
    seeds = list(range(size["seeds"]))
    note = NOTE.format(draws=size["n_draws"], warmup=size["n_warmup"], seeds=size["seeds"])
    lines = [header("Compressed posteriors vs radius against mean-field VB, seed paper 003 "
                    "Table 3", args, seeds=seeds, repeats=size["seeds"], note=note),
             headline(results), ""]
    for name, res in results.items():
        lines += set_table(name, res)
    return "\n".join(lines)


def headline(results):
    out = ["### Headline: the smallest compression ratio c/N on the grid at which the compressed "
           "posterior is closer to p than mean-field VB (its KL in brackets), and the crossing "
           "c/N interpolated log-log between grid points", "",
           "| data set | KL(p‖q) VB | KL(q‖p) VB | clustering | KL(p‖p~) < KL(p‖q) | "
           "crossing | KL(p~‖p) < KL(q‖p) | crossing |", "|---|---|---|---|---|---|---|---|"]
    for name, res in results.items():
        ref, key = res["reference"], "kl" if res["model"] == "linear" else "kl_hmc"
        for c in CLUSTERINGS:
            cells = []
            for k, vb in ((key, ref["vb_kl"]), ("kl_rev", ref["vb_kl_rev"])):
                first, x = break_even(res, c, k, vb) if k in res["rows"][0] else ("n/a", None)
                cells += [f"{first[0]:.3g} ({first[1]:.3g})" if isinstance(first, tuple) else
                          first or "none", "—" if x is None else format(x, ".3g")]
            out.append(f"| {name} | {ref['vb_kl']:.3g} | {ref['vb_kl_rev']:.3g} | {c} | "
                       + " | ".join(cells) + " |")
    return "\n".join(out)


def set_table(name, res):
    ref, linear = res["reference"], res["model"] == "linear"
    lines = [f"### {name}: {res['model']} regression (N={res['n_train']}, d={res['n_features']}, "
             f"test {res['n_test']})", "", f"Reference posterior: {ref['kind']}" + (
                 f" ({ref['seconds']:.0f} s, max R-hat {ref['max_rhat']:.3f})"
                 if "seconds" in ref else "") + ".", "",
             "| clustering | delta | " + " | ".join(c[1] for c in COLS) + " |",
             "|---|---|" + "---|" * len(COLS)]
    vb = {"compression_ratio": "1", "kl": f"{ref['vb_kl']:.3g}", "data_passes": "1",
          "kl_rev": f"{ref['vb_kl_rev']:.3g}", "test_error": f"{ref.get('vb_test_error'):.4g}"
          } if linear else {"kl_hmc": f"{ref['vb_kl']:.3g} (KL(q‖p) {ref['vb_kl_rev']:.3g})"}
    lines.append("| mean-field VB | — | " + " | ".join(vb.get(c, "—") for c, _, _ in COLS) + " |")
    for c in ("exact",) + CLUSTERINGS:
        for radius, rs in sorted(_by_radius(res["rows"], c).items()):
            cells = [mean_sd([r[k] for r in rs], f) if k in rs[0] else "—" for k, _, f in COLS]
            label = "exact (hmc + full)" if c == "exact" else c
            lines.append(f"| {label} | {radius:g} | " + " | ".join(cells) + " |")
    if res["target_ratio_rows"]:
        lines += ["", "Secondary knob, `Compressed(target_ratio=r)` (bisect, closed form only):",
                  "", "| target_ratio | c/N | max radius | KL(p‖p~) exact | KL(p~‖p) exact |",
                  "|---|---|---|---|---|"]
        lines += [f"| {t['target_ratio']:g} | {t['compression_ratio']:.3g} | "
                  f"{t['max_cluster_radius']:.3g} | {t['kl']:.3g} | {t['kl_rev']:.3g} |"
                  for t in res["target_ratio_rows"]]
    return lines + [""]


def figure(results):
    def draw(plt):
        fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.8),
                                 squeeze=False)
        for ax, (name, res) in zip(axes[0], results.items()):
            key = "kl" if res["model"] == "linear" else "kl_hmc"
            for c, marker in zip(CLUSTERINGS, "os"):
                by = sorted(_by_radius(res["rows"], c).items())
                ratio = [np.mean([r["compression_ratio"] for r in rs]) for _, rs in by]
                kl = [[r[key] for r in rs] for _, rs in by]
                ax.errorbar(ratio, [np.mean(k) for k in kl], yerr=[np.std(k) for k in kl],
                            fmt=marker + "-", capsize=3, label=f"compressed, {c}")
            ax.axhline(res["reference"]["vb_kl"], color="k", ls="--", label="mean-field VB")
            if key == "kl":  # the other direction, the one VB minimises
                for c in CLUSTERINGS:
                    by = sorted(_by_radius(res["rows"], c).items())
                    ax.plot([np.mean([r["compression_ratio"] for r in rs]) for _, rs in by],
                            [np.mean([r["kl_rev"] for r in rs]) for _, rs in by], lw=0.8,
                            ls=":", color="C0" if c == "bisect" else "C1",
                            label=f"KL(p~ || p), {c}")
                ax.axhline(res["reference"]["vb_kl_rev"], color="k", ls=":", lw=0.8,
                           label="KL(q || p), VB")
            floor = [r["kl_hmc"] for r in res["rows"] if r["clustering"] == "exact"]
            if key == "kl_hmc":
                ax.axhline(np.mean(floor), color="grey", ls=":", label="HMC floor (exact)")
            ax.set(xscale="log", yscale="log", xlabel="compression ratio c/N",
                   ylabel="KL(p || p~)" + (" exact" if key == "kl" else " from HMC draws"),
                   title=name)
            ax.legend(fontsize=7)
        fig.tight_layout()
        return fig
    return draw


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
