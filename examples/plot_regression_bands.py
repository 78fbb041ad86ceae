"""Posterior-predictive bands on diabetes, against scikit-learn's BayesianRidge.
=============================================================================

BayesianLinearRegression gives what BayesianRidge gives -- a predictive mean
and standard deviation (``predict(return_std=True)``) -- and also draws: of
new targets (``sample_y``) and of every parameter (``sample_posterior``),
including the intercept, whose uncertainty BayesianRidge does not report.
X is standardized and the model fits a standardized target (user-guide advice);
results are mapped back to the target's units.
Set SKBAYES_SG_FAST=1 for a quick smoke run; SKBAYES_SG_FIGURES=<dir> moves the PNG.
"""

# %%
# The lines that matter::
#
#     reg = BayesianLinearRegression(random_state=0).fit(X, y)
#     mean, std = reg.predict(X_test, return_std=True)    # predictive mean and sd, noise included
#     y_draws = reg.sample_y(X_test, n_samples=400)       # (n_test, 400) posterior-predictive draws

import os
import time
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import BayesianRidge
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianLinearRegression

FAST = os.environ.get("SKBAYES_SG_FAST") == "1"
FIGURES = Path(os.environ.get("SKBAYES_SG_FIGURES") or Path(__file__).parent / "figures")
SHORT = dict(n_warmup=100, n_draws=100) if FAST else {}
matplotlib.use("Agg")  # write files, open no window

data = load_diabetes()
Xtr, Xte, ytr, yte = train_test_split(data.data, data.target, test_size=0.3, random_state=0)
scaler = StandardScaler().fit(Xtr)
Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
mu, sd = ytr.mean(), ytr.std()

t0 = time.perf_counter()
blr = BayesianLinearRegression(random_state=0, **SHORT).fit(Xtr, (ytr - mu) / sd)
seconds = time.perf_counter() - t0
ridge = BayesianRidge().fit(Xtr, ytr)

mean_b, std_b = blr.predict(Xte, return_std=True)
mean_b, std_b = mu + sd * mean_b, sd * std_b
mean_r, std_r = ridge.predict(Xte, return_std=True)
y_draws = mu + sd * blr.sample_y(Xte, n_samples=400, random_state=0)  # (n_test, 400)
lo, hi = np.percentile(y_draws, [5, 95], axis=1)
post = blr.sample_posterior()
intercept, coef = mu + sd * post["intercept"], sd * post["coef"]
coef_sd_r = np.sqrt(np.diag(ridge.sigma_))


def coverage(lower, upper):
    return np.mean((yte >= lower) & (yte <= upper))


r2_b = 1 - np.mean((yte - mean_b) ** 2) / yte.var()
print(f"BayesianLinearRegression: fit {seconds:.1f}s, test R² {r2_b:.3f}, mean predictive sd "
      f"{std_b.mean():.1f}, 90% coverage (sample_y) {coverage(lo, hi):.2f}")
cover_r = coverage(mean_r - 1.645 * std_r, mean_r + 1.645 * std_r)
print(f"BayesianRidge:            test R² {ridge.score(Xte, yte):.3f}, mean predictive sd "
      f"{std_r.mean():.1f}, 90% coverage (±1.645 sd) {cover_r:.2f}")
q5, q95 = np.percentile(intercept, [5, 95])
print(f"intercept: {intercept.mean():.2f} ± {intercept.std():.2f} (90% interval {q5:.1f} to "
      f"{q95:.1f}); BayesianRidge gives {ridge.intercept_:.2f} with no uncertainty")
print(f"noise sd: {blr.noise_std_ * sd:.1f} (BayesianRidge {1 / np.sqrt(ridge.alpha_):.1f})")
report = blr.summary()
print("convergence:", "no warnings" if report.converged else report.warnings[0])

fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), gridspec_kw={"width_ratios": [2, 1.4, 1]})
order = np.argsort(mean_b)
x = np.arange(len(order))
ax = axes[0]
ax.fill_between(x, lo[order], hi[order], color="C0", alpha=0.3, label="90% band (sample_y)")
ax.plot(x, mean_b[order], color="C0", label="posterior-predictive mean")
ax.plot(x, (mean_r + 1.645 * std_r)[order], "k--", lw=0.8, label="BayesianRidge ±1.645 sd")
ax.plot(x, (mean_r - 1.645 * std_r)[order], "k--", lw=0.8)
ax.plot(x, yte[order], ".", color="C3", ms=4, label="test targets")
ax.set(xlabel="test patients, sorted by prediction", ylabel="disease progression",
       title="posterior-predictive bands")
ax.legend(fontsize=7, loc="upper left")
ax = axes[1]
pos = np.arange(coef.shape[1])
ax.errorbar(coef.mean(0), pos + 0.15, xerr=2 * coef.std(0), fmt="o", ms=3,
            label="Bayesian (±2 sd)")
ax.errorbar(ridge.coef_, pos - 0.15, xerr=2 * coef_sd_r, fmt="s", ms=3, color="k",
            label="BayesianRidge (±2 sd)")
ax.set(yticks=pos, yticklabels=data.feature_names, xlabel="coefficient (per feature sd)",
       title="coefficients")
ax.axvline(0, color="grey", lw=0.5)
ax.legend(fontsize=7)
ax = axes[2]
ax.hist(intercept, bins=40, color="C0", alpha=0.7, density=True, label="posterior draws")
ax.axvline(ridge.intercept_, color="k", ls="--", label="BayesianRidge (point)")
ax.set(xlabel="intercept", title="intercept uncertainty", yticks=[])
ax.set_ylim(top=1.35 * ax.get_ylim()[1])
ax.legend(fontsize=7, loc="upper left")
fig.tight_layout()
FIGURES.mkdir(parents=True, exist_ok=True)
fig.savefig(FIGURES / "regression_bands.png", dpi=90)
print(f"saved {FIGURES / 'regression_bands.png'}")
