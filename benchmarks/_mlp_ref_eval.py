"""Problems, predictives and metrics of ``bench_mlp_reference.py``.

Classification, on held-out rows, against the reference predictive ``p_ref`` (the NeurIPS 2021
approximate-inference competition's metrics): top-1 agreement ``mean[argmax p == argmax p_ref]``
and total variation ``mean 0.5 sum_k |p_k - p_ref,k|``; plus accuracy, NLL and expected
calibration error (15 equal-width confidence bins).  Regression: RMSE and test log-likelihood
per row, and against the reference predictive (mean ``m``, sd ``s``, noise included) the mean
2-Wasserstein distance between the Gaussians ``N(m, s^2)`` and ``N(m_ref, s_ref^2)``,
``sqrt((m - m_ref)^2 + (s - s_ref)^2)`` (y standardized, so in training-sd units), the mean
``|m - m_ref| / s_ref`` and the median ``s / s_ref``.
"""

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm
from sklearn.datasets import load_digits, make_moons
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from _data import load
from _mlp_reference import RefProblem
from skbayes_sg.diagnostics import split_rhat

__all__ = ["PROBLEMS", "classification_metrics", "noise_floor", "reference_predictive",
           "regression_metrics"]


def _digits(quick, data_dir):
    X, y = load_digits(return_X_y=True)
    if quick:
        X, y = X[:400], y[:400]
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    sc = StandardScaler().fit(Xtr)
    return RefProblem("digits", "classifier", sc.transform(Xtr), ytr, sc.transform(Xte), yte,
                      (32,))


def _moons(quick, data_dir):
    n = 100 if quick else 300
    X, y = make_moons(n_samples=n, noise=0.25, random_state=0)
    Xte, yte = make_moons(n_samples=500, noise=0.25, random_state=1)
    return RefProblem("moons", "classifier", X, y, Xte, yte, (16, 16))


def _cadata(quick, data_dir):
    rows = 300 if quick else 1000
    Xtr, ytr, Xte, yte, _ = load("cadata", data_dir, quick=quick, max_rows=rows)
    mu, sd = ytr.mean(), ytr.std()  # exactly the regressor's normalize_y
    return RefProblem("cadata", "regressor", Xtr, (ytr - mu) / sd, Xte, (yte - mu) / sd, (50,))


def _sine(quick, data_dir):
    """``sin(2x)`` plus noise of sd 0.1 on ``[-2, 2]``; held out: a grid on ``[-6, 6]``, two
    thirds of it away from the data, where the predictive sd should grow."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-2.0, 2.0, size=(100 if quick else 300, 1))
    Xte = np.linspace(-6.0, 6.0, 250)[:, None]
    y, yte = (np.sin(2.0 * A[:, 0]) + 0.1 * rng.normal(size=len(A)) for A in (X, Xte))
    mu, sd = y.mean(), y.std()
    return RefProblem("sine", "regressor", X, (y - mu) / sd, Xte, (yte - mu) / sd, (16,),
                      activation="tanh")


#: name -> ``(quick, data_dir) -> RefProblem``
PROBLEMS = {"digits": _digits, "moons": _moons, "cadata": _cadata, "sine": _sine}


def reference_predictive(problem, theta):
    """Per-draw predictive on the test rows: ``(C, D, n, K)`` probabilities, or for a regressor
    ``(mean (C, D, n), noise sd (C, D))``, computed by the library's own model."""
    C, D, p = theta.shape
    flat = theta.reshape(C * D, p)
    out = problem.model().predict_output(flat, problem.X_test)
    if problem.kind == "regressor":
        return out.reshape(C, D, -1), np.exp(flat[:, -1]).reshape(C, D)
    return out.reshape(C, D, *out.shape[1:])


def summarize_reference(problem, pred):
    """The reference's predictive (pooled over chains and draws) and its R-hat over test rows:
    of ``p(reference class)`` for a classifier, of the network's output for a regressor."""
    if problem.kind == "regressor":
        mean, sigma = pred
        q, pooled = mean, _gaussian_mixture(mean, sigma)
    else:
        pooled = pred.mean(axis=(0, 1))
        q = np.take_along_axis(pred, pooled.argmax(1)[None, None, :, None], axis=-1)[..., 0]
    rhat = split_rhat(q)
    return pooled, {"rhat_median": float(np.nanmedian(rhat)), "rhat_max": float(np.nanmax(rhat)),
                    "rhat_frac_over_1.1": float(np.mean(rhat > 1.1))}


def _gaussian_mixture(mean, sigma):
    """Mean and sd ``(n,)`` of the mixture of ``N(mean_s, sigma_s^2)`` over draws, and the
    draws themselves for the exact log-likelihood."""
    m = mean.reshape(-1, mean.shape[-1])
    s = np.broadcast_to(sigma.reshape(-1, 1), m.shape)
    mu = m.mean(axis=0)
    return {"mean": mu, "sd": np.sqrt((s ** 2 + m ** 2).mean(axis=0) - mu ** 2),
            "draw_mean": m, "draw_sd": s}


def noise_floor(problem, pred):
    """The metrics of one half of the reference's chains against the other half."""
    C = (pred[0] if problem.kind == "regressor" else pred).shape[0]
    a, b = slice(0, C // 2), slice(C // 2, C)
    if problem.kind == "regressor":
        mean, sigma = pred
        ha, hb = _gaussian_mixture(mean[a], sigma[a]), _gaussian_mixture(mean[b], sigma[b])
        return regression_metrics(ha["mean"], ha["sd"], problem.y_test, hb)
    pa, pb = pred[a].mean(axis=(0, 1)), pred[b].mean(axis=(0, 1))
    return classification_metrics(pa, problem.y_test, pb)


def ece(proba, y, n_bins=15):
    """Expected calibration error of the top-1 confidence, equal-width bins."""
    conf, hit = proba.max(axis=1), proba.argmax(axis=1) == y
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in np.unique(bins):
        m = bins == b
        total += m.sum() * abs(conf[m].mean() - hit[m].mean())
    return float(total / len(y))


def classification_metrics(proba, y, ref):
    """Agreement and TV against ``ref`` ``(n, K)``, accuracy, NLL, ECE."""
    proba = np.clip(proba, 1e-300, None)
    return {"agreement": float(np.mean(proba.argmax(1) == ref.argmax(1))),
            "tv": float(np.mean(0.5 * np.abs(proba - ref).sum(axis=1))),
            "accuracy": float(np.mean(proba.argmax(1) == y)),
            "nll": float(-np.mean(np.log(proba[np.arange(len(y)), y]))),
            "ece": ece(proba, y)}


def gaussian_tv(m1, s1, m2, s2, n_grid=4001):
    """Total variation between ``N(m1, s1^2)`` and ``N(m2, s2^2)`` per row (numerically)."""
    lo = np.minimum(m1 - 8 * s1, m2 - 8 * s2)[:, None]
    hi = np.maximum(m1 + 8 * s1, m2 + 8 * s2)[:, None]
    x = lo + (hi - lo) * np.linspace(0.0, 1.0, n_grid)[None, :]
    diff = np.abs(norm.pdf(x, m1[:, None], s1[:, None]) - norm.pdf(x, m2[:, None], s2[:, None]))
    return 0.5 * diff.sum(axis=1) * (hi[:, 0] - lo[:, 0]) / (n_grid - 1)


def regression_metrics(mean, sd, y, ref):
    """RMSE and Gaussian log-likelihood per row; W2, TV (to the reference's moment-matched
    Gaussian), mean shift / ref sd, sd ratio vs ``ref``."""
    ll = -0.5 * np.log(2 * np.pi * sd ** 2) - 0.5 * ((y - mean) / sd) ** 2
    return {"w2": float(np.mean(np.sqrt((mean - ref["mean"]) ** 2 + (sd - ref["sd"]) ** 2))),
            "tv": float(np.mean(gaussian_tv(mean, sd, ref["mean"], ref["sd"]))),
            "mean_shift": float(np.mean(np.abs(mean - ref["mean"]) / ref["sd"])),
            "sd_ratio": float(np.median(sd / ref["sd"])),
            "rmse": float(np.sqrt(np.mean((y - mean) ** 2))), "loglik": float(np.mean(ll))}


def reference_metrics(problem, pooled):
    """The reference's own accuracy / NLL / ECE or RMSE / log-likelihood (exact mixture)."""
    if problem.kind != "regressor":
        return classification_metrics(pooled, problem.y_test, pooled)
    m, s, y = pooled["draw_mean"], pooled["draw_sd"], problem.y_test
    ll = logsumexp(-0.5 * np.log(2 * np.pi * s ** 2) - 0.5 * ((y - m) / s) ** 2, axis=0)
    out = regression_metrics(pooled["mean"], pooled["sd"], y, pooled)
    return {**out, "loglik": float(np.mean(ll - np.log(len(m))))}


def boundary_figure(plt, problem, theta, predictors, n_grid=100, max_draws=400):
    """Panels of ``p(class 1)`` on a grid over a 2-D problem: the reference (at most
    ``max_draws`` pooled draws, evenly spaced) and each of ``predictors`` (name -> ``X -> p``),
    with the 0.5 contour and the training rows."""
    lo, hi = problem.X.min(axis=0) - 0.5, problem.X.max(axis=0) + 0.5
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], n_grid), np.linspace(lo[1], hi[1], n_grid))
    grid = np.c_[g0.ravel(), g1.ravel()]
    flat = theta.reshape(-1, theta.shape[-1])
    flat = flat[np.linspace(0, len(flat) - 1, min(len(flat), max_draws)).round().astype(int)]
    panels = {"NUTS reference": problem.model().predict_mean(flat, grid)[:, 1]}
    panels.update({name: f(grid)[:, 1] for name, f in predictors.items()})
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.2), sharey=True)
    for ax, (name, p) in zip(np.atleast_1d(axes), panels.items()):
        ax.contourf(g0, g1, p.reshape(g0.shape), levels=np.linspace(0, 1, 11), cmap="RdBu_r")
        ax.contour(g0, g1, p.reshape(g0.shape), levels=[0.5], colors="k", linewidths=1)
        ax.scatter(*problem.X.T, c=problem.y, s=6, cmap="RdBu_r", edgecolors="k",
                   linewidths=0.3)
        ax.set_title(name, fontsize=9)
    fig.suptitle(f"{problem.name}: p(class 1), training rows; black line p = 0.5", fontsize=9)
    return fig
