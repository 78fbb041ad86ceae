"""Model selection: GridSearchCV, cross_val_score and a Pipeline, as with any estimator.
=====================================================================================

Searches ``prior_scale``, the ``sampler`` and a hyperparameter of the
subsampling strategy object (``clf__subsampling__n_clusters`` of
``Stratified(correction="cv")``: k-means strata, with control variates at the
mode so that the chains mix) by cross-validated log-loss, then compares the
best pipeline with ``LogisticRegression`` by ``cross_val_score``.  Fits whose
chains still look unconverged (sgnht, the weak prior 10 on this nearly
separable set) raise a ConvergenceWarning, as they should.
Set SKBAYES_SG_FAST=1 for a quick smoke run; SKBAYES_SG_FIGURES=<dir> moves the PNG.
"""

# %%
# The lines that matter::
#
#     pipe = Pipeline([("scale", StandardScaler()), ("clf", BayesianLogisticRegression())])
#     grid = {"clf__prior_scale": [0.1, 1, 10], "clf__subsampling": [Stratified(correction="cv")],
#             "clf__subsampling__n_clusters": [4, 20]}
#     GridSearchCV(pipe, grid, cv=2, scoring="neg_log_loss").fit(X, y)

import os
import time
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.subsampling import Stratified

FAST = os.environ.get("SKBAYES_SG_FAST") == "1"
FIGURES = Path(os.environ.get("SKBAYES_SG_FIGURES") or Path(__file__).parent / "figures")
SIZE = dict(n_warmup=100, n_draws=100) if FAST else {}  # full mode: default chain lengths
SCALES = [1.0] if FAST else [0.1, 1.0, 10.0]
matplotlib.use("Agg")  # write files, open no window

X, y = load_breast_cancer(return_X_y=True)
pipe = Pipeline([("scale", StandardScaler()),
                 ("clf", BayesianLogisticRegression(n_chains=2, random_state=0, **SIZE))])
param_grid = {"clf__prior_scale": SCALES,
              "clf__sampler": ["sghmc"] if FAST else ["sghmc", "sgnht"],
              "clf__subsampling": [Stratified(correction="cv")],
              "clf__subsampling__n_clusters": [4, 20]}
cv = StratifiedKFold(2, shuffle=True, random_state=0)
t0 = time.perf_counter()
search = GridSearchCV(pipe, param_grid, cv=cv, scoring="neg_log_loss").fit(X, y)
n_fits = len(search.cv_results_["params"]) * cv.get_n_splits() + 1
print(f"GridSearchCV: {n_fits} fits in {time.perf_counter() - t0:.1f}s; best log-loss "
      f"{-search.best_score_:.4f} with {search.best_params_}")


def label(params):
    return (f"{params['clf__sampler']}, {params['clf__subsampling__n_clusters']} strata, "
            f"prior {params['clf__prior_scale']}")


res = search.cv_results_
order = np.argsort(-res["mean_test_score"])
for i in order:
    print(f"  {label(res['params'][i]):34s} log-loss {-res['mean_test_score'][i]:.4f} "
          f"± {res['std_test_score'][i]:.4f}")

outer = StratifiedKFold(2 if FAST else 5, shuffle=True, random_state=1)
scores = {}
for name, model in [("best Bayesian pipeline", clone(search.best_estimator_)),
                    ("LogisticRegression", Pipeline([("scale", StandardScaler()),
                                                     ("clf", LogisticRegression(max_iter=1000))]))]:
    scores[name] = -cross_val_score(model, X, y, cv=outer, scoring="neg_log_loss")
    print(f"{name:24s} cross_val_score: log-loss {scores[name].mean():.4f} ± "
          f"{scores[name].std():.4f} over {outer.get_n_splits()} outer folds")
best = search.best_estimator_[-1]
print(f"refit on all data: {best.diagnostics_['n_grad_evals']:,} gradient evaluations, "
      f"{best.diagnostics_['sampling_seconds']:.2f}s sampling")

fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), gridspec_kw={"width_ratios": [1.6, 1]})
ax = axes[0]
pos = np.arange(len(order))
ax.barh(pos, -res["mean_test_score"][order], xerr=res["std_test_score"][order], color="C0")
ax.set(yticks=pos, yticklabels=[label(res["params"][i]) for i in order],
       xlabel="cross-validated log-loss (lower is better)", title="GridSearchCV candidates")
ax.invert_yaxis()
ax.tick_params(axis="y", labelsize=8)
ax = axes[1]
ax.boxplot(list(scores.values()), tick_labels=list(scores), widths=0.4)
for k, s in enumerate(scores.values(), start=1):
    ax.plot(np.full(len(s), k), s, "o", color="C1", ms=4)
ax.set(ylabel="log-loss per outer fold", title="cross_val_score")
fig.tight_layout()
FIGURES.mkdir(parents=True, exist_ok=True)
fig.savefig(FIGURES / "model_selection.png", dpi=90)
print(f"saved {FIGURES / 'model_selection.png'}")
