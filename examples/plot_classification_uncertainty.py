"""Classification uncertainty: predictive probability, its spread, and calibration.
================================================================================

Left: BayesianLogisticRegression on cubic features of ``make_moons``; the
posterior-predictive probability p(y=1|x) and its standard deviation over
posterior draws (from ``sample_posterior`` and a sigmoid): the model is unsure
far from the data, where a point estimate is not.  Right: the reliability
diagram of out-of-fold probabilities on breast cancer, Bayesian vs
``LogisticRegression``, with the expected calibration error (ECE).
Set SKBAYES_SG_FAST=1 for a quick smoke run; SKBAYES_SG_FIGURES=<dir> moves the PNG.
"""

# %%
# The lines that matter::
#
#     clf = make_pipeline(StandardScaler(), BayesianLogisticRegression(random_state=0)).fit(X, y)
#     proba = clf.predict_proba(X_test)                    # posterior-predictive average
#     coef = clf[-1].sample_posterior(200)["coef"]         # (200, 1, n_features) draws: spread of p(y=1|x)

import os
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from scipy.special import expit
from sklearn.datasets import load_breast_cancer, make_moons
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss, log_loss
from sklearn.model_selection import cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from skbayes_sg import BayesianLogisticRegression

FAST = os.environ.get("SKBAYES_SG_FAST") == "1"
FIGURES = Path(os.environ.get("SKBAYES_SG_FIGURES") or Path(__file__).parent / "figures")
SHORT = dict(n_warmup=100, n_draws=100) if FAST else {}
matplotlib.use("Agg")  # write files, open no window


def proba_draws(pipe, X, n_draws=400):
    """p(y=1|x) under each of ``n_draws`` posterior draws: (n_samples, n_draws)."""
    features = pipe[:-1].transform(X)
    post = pipe[-1].sample_posterior(n_draws, random_state=0)
    return expit(features @ post["coef"][:, 0, :].T + post["intercept"][:, 0])


def calibration(p, y, n_bins=10):
    """Per-bin mean probability and frequency, and the expected calibration error."""
    bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
    used = [b for b in range(n_bins) if np.any(bins == b)]
    conf = np.array([p[bins == b].mean() for b in used])
    freq = np.array([y[bins == b].mean() for b in used])
    weight = np.array([np.mean(bins == b) for b in used])
    return conf, freq, float(np.sum(weight * np.abs(conf - freq)))


# 1. a 2-D problem: probability and its spread over the posterior
X, y = make_moons(n_samples=100 if FAST else 300, noise=0.3, random_state=0)
moons = make_pipeline(PolynomialFeatures(3), StandardScaler(),
                      BayesianLogisticRegression(random_state=0, **SHORT)).fit(X, y)
n_grid = 40 if FAST else 120
g0, g1 = np.meshgrid(np.linspace(-2.5, 3.5, n_grid), np.linspace(-2.0, 2.5, n_grid))
grid = np.c_[g0.ravel(), g1.ravel()]
p = proba_draws(moons, grid)
p_mean, p_sd = p.mean(1).reshape(g0.shape), p.std(1).reshape(g0.shape)
print(f"moons: training accuracy {moons.score(X, y):.3f}; sd of p(y=1|x) over draws: "
      f"median {np.median(p_sd):.3f}, max {p_sd.max():.3f} on the grid")

# 2. calibration on a real data set, with out-of-fold probabilities
Xc, yc = load_breast_cancer(return_X_y=True)
models = {"BayesianLogisticRegression": BayesianLogisticRegression(random_state=0, **SHORT),
          "LogisticRegression": LogisticRegression(max_iter=1000)}
curves = {}
for name, model in models.items():
    proba = cross_val_predict(make_pipeline(StandardScaler(), model), Xc, yc, cv=5,
                              method="predict_proba")[:, 1]
    curves[name] = calibration(proba, yc)
    print(f"{name:27s} ECE {curves[name][2]:.4f}  log-loss {log_loss(yc, proba):.4f}  "
          f"Brier {brier_score_loss(yc, proba):.4f}  accuracy {np.mean((proba > 0.5) == yc):.3f}")

fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
for ax, values, title, cmap in [(axes[0], p_mean, "posterior-predictive p(y=1|x)", "RdBu_r"),
                                (axes[1], p_sd, "sd of p(y=1|x) over draws", "viridis")]:
    im = ax.contourf(g0, g1, values, levels=20, cmap=cmap)
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="RdBu_r", edgecolors="k", s=12, linewidths=0.5)
    ax.set(title=title, xlabel="X[:, 0] (moons)", ylabel="X[:, 1]", xticks=[], yticks=[])
    fig.colorbar(im, ax=ax)
ax = axes[2]
ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":", label="calibrated")
for name, (conf, freq, ece) in curves.items():
    ax.plot(conf, freq, "o-", ms=4, label=f"{name} (ECE {ece:.3f})")
ax.set(xlabel="mean predicted probability", ylabel="observed frequency",
       title="reliability, breast cancer (5-fold)")
ax.legend(fontsize=7)
fig.tight_layout()
FIGURES.mkdir(parents=True, exist_ok=True)
fig.savefig(FIGURES / "classification_uncertainty.png", dpi=90)
print(f"saved {FIGURES / 'classification_uncertainty.png'}")
