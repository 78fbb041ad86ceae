"""BayesianMLPClassifier on digits: accuracy, log-loss, and what it is unsure about.
=================================================================================

Compares a one-hidden-layer Bayesian network with scikit-learn's
``MLPClassifier`` of the same size, shows the test images with the highest
predictive entropy, and the accuracy obtained when the most uncertain test
images are set aside (a use of uncertainty a point estimate only imitates).
Set SKBAYES_SG_FAST=1 for a quick smoke run; SKBAYES_SG_FIGURES=<dir> moves the PNG.
"""

# %%
# The lines that matter::
#
#     mlp = make_pipeline(StandardScaler(), BayesianMLPClassifier(hidden_layer_sizes=(32,)))
#     proba = mlp.fit(X, y).predict_proba(X_test)          # averaged over the chains' networks
#     entropy = -(proba * np.log(proba + 1e-12)).sum(1)   # high entropy: set the image aside

import os
import time
import warnings
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianMLPClassifier

FAST = os.environ.get("SKBAYES_SG_FAST") == "1"
FIGURES = Path(os.environ.get("SKBAYES_SG_FIGURES") or Path(__file__).parent / "figures")
# 4 chains: the predictive averages over several modes of the network's posterior
SIZE = dict(n_warmup=200, n_draws=40, n_chains=2) if FAST else dict(n_draws=200, n_chains=4)
matplotlib.use("Agg")  # write files, open no window


def entropy(proba):
    return -np.sum(proba * np.log(np.clip(proba, 1e-12, 1.0)), axis=1)


def accuracy_when_keeping(proba, y, fractions):
    """Accuracy on the most certain ``fraction`` of the points (lowest entropy)."""
    order = np.argsort(entropy(proba))
    correct = proba.argmax(1)[order] == y[order]
    return [correct[: max(1, int(f * len(y)))].mean() for f in fractions]


X, y = load_digits(return_X_y=True)
images = X.reshape(-1, 8, 8)
idx_tr, idx_te = train_test_split(np.arange(len(y)), test_size=0.3, random_state=0, stratify=y)
models = {
    "BayesianMLPClassifier": BayesianMLPClassifier(hidden_layer_sizes=(32,), random_state=0,
                                                   **SIZE),
    "MLPClassifier": MLPClassifier(hidden_layer_sizes=(32,), max_iter=100 if FAST else 500,
                                   random_state=0),
}
probas = {}
for name, model in models.items():
    pipe = make_pipeline(StandardScaler(), model)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # scikit-learn's warning, for MLPClassifier's short max_iter in fast mode; skbayes_sg's
        # own ConvergenceWarning is another class and still shows
        warnings.simplefilter("ignore", SklearnConvergenceWarning)
        pipe.fit(X[idx_tr], y[idx_tr])
    seconds = time.perf_counter() - t0
    probas[name] = proba = pipe.predict_proba(X[idx_te])
    wrong = proba.argmax(1) != y[idx_te]
    print(f"{name:22s} fit {seconds:4.1f}s  accuracy {1 - wrong.mean():.3f}  "
          f"log-loss {log_loss(y[idx_te], proba):.3f}  mean entropy: correct "
          f"{entropy(proba)[~wrong].mean():.3f}, wrong {entropy(proba)[wrong].mean():.3f}; "
          "accuracy "
          f"on the 90% most certain {accuracy_when_keeping(proba, y[idx_te], [0.9])[0]:.3f}")
d = models["BayesianMLPClassifier"].diagnostics_
print(f"Bayesian cost: {d['n_grad_evals']:,} gradient evaluations ({d['data_passes']:.0f} data "
      f"passes), draws {models['BayesianMLPClassifier'].draws_.shape}")
print(f"Bayesian verdict: converged={d['converged']}, pooled predictive Monte-Carlo error "
      f"{d['pooled_error']:.3f} (tolerance {d['pooled_error_tolerance']})")

proba = probas["BayesianMLPClassifier"]
worst = np.argsort(-entropy(proba))[:8]
fractions = np.linspace(0.5, 1.0, 11)
fig = plt.figure(figsize=(12, 3.8))
grid = fig.add_gridspec(2, 7)
for k, i in enumerate(worst):
    ax = fig.add_subplot(grid[k // 4, k % 4])
    ax.imshow(images[idx_te[i]], cmap="gray_r")
    top = np.argsort(-proba[i])[:2]
    ax.set_title(f"true {y[idx_te[i]]}: p({top[0]})={proba[i, top[0]]:.2f}\n"
                 f"p({top[1]})={proba[i, top[1]]:.2f}", fontsize=8)
    ax.set(xticks=[], yticks=[])
ax = fig.add_subplot(grid[:, 4:])
for name, p in probas.items():
    ax.plot(fractions, accuracy_when_keeping(p, y[idx_te], fractions), "o-", ms=3, label=name)
ax.set(xlabel="fraction of test images kept (most certain first)", ylabel="accuracy",
       title="accuracy when uncertain images are deferred")
ax.legend(fontsize=8)
fig.suptitle("the 8 most uncertain test digits (highest predictive entropy)", x=0.3, fontsize=10)
fig.tight_layout()
FIGURES.mkdir(parents=True, exist_ok=True)
fig.savefig(FIGURES / "mlp_digits.png", dpi=90)
print(f"saved {FIGURES / 'mlp_digits.png'}")
