"""Quickstart: the three estimators on data that ships with scikit-learn.
======================================================================

Fits BayesianLogisticRegression (breast cancer), BayesianMLPClassifier
(digits) and BayesianLinearRegression (diabetes) inside Pipelines, and prints
accuracy / R², log-loss, predictive uncertainty and convergence diagnostics.
Set SKBAYES_SG_FAST=1 for a quick smoke run (used by the test-suite).
"""

# %%
# The lines that matter::
#
#     from skbayes_sg import BayesianLogisticRegression
#     clf = make_pipeline(StandardScaler(), BayesianLogisticRegression(random_state=0)).fit(X, y)
#     proba = clf.predict_proba(X_test)          # averaged over the posterior draws
#     print(clf[-1].summary())                  # R-hat, ESS and the fit's verdict

import os
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier

FAST = os.environ.get("SKBAYES_SG_FAST") == "1"
SHORT = dict(n_warmup=100, n_draws=50) if FAST else {}


def report(name, est, seconds):
    d = est.diagnostics_
    if "pooled_error" in d:
        # a network is judged by what predict_proba averages: the pooled predictive over chains
        # that sit in different modes (its raw weights permute between chains)
        verdict = (f"pooled predictive MC error {d['pooled_error']:.3f} "
                   f"(tolerance {d['pooled_error_tolerance']})")
    else:
        verdict = (f"min bulk ESS {np.nanmin(d['ess']):.0f} | "
                   f"max R-hat {np.nanmax(d['rhat']):.3f}")
    print(f"  fit {seconds:.1f}s | sampler step {d['step_size']:.3g} | {verdict} | "
          f"{d['data_passes']:.1f} data passes")
    if not d["converged"]:
        print(f"  not converged after {d['sampling_steps']} sampling steps per chain: "
              "the ConvergenceWarning above says why and what to do")


def classification(name, est, X, y):
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    pipe = make_pipeline(StandardScaler(), est)
    t = time.perf_counter()
    pipe.fit(Xtr, ytr)
    seconds = time.perf_counter() - t
    proba = pipe.predict_proba(Xte)
    print(f"{name}: accuracy {pipe.score(Xte, yte):.3f}, log-loss {log_loss(yte, proba):.3f}, "
          f"mean max-probability {proba.max(1).mean():.3f}")
    report(name, pipe[-1], seconds)


def regression():
    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    # y is standardized inside the estimator (normalize_y=True): answers come in y's units
    reg = make_pipeline(StandardScaler(), BayesianLinearRegression(random_state=0, **SHORT))
    t = time.perf_counter()
    reg.fit(Xtr, ytr)
    seconds = time.perf_counter() - t
    blr = reg[-1]
    _, std = reg.predict(Xte, return_std=True)
    print(f"BayesianLinearRegression (diabetes): R² {reg.score(Xte, yte):.3f}, "
          f"predictive sd {std.mean():.1f} (target sd {y.std():.1f}), "
          f"noise sd {blr.noise_std_:.1f}")
    report("linear", blr, seconds)


if __name__ == "__main__":
    classification("BayesianLogisticRegression (breast cancer)",
                   BayesianLogisticRegression(random_state=0, **SHORT),
                   *load_breast_cancer(return_X_y=True))
    # A network's four chains sit in different modes (each at its own Adam run); predict_proba
    # averages them, and the verdict is the Monte-Carlo error of that average.
    classification("BayesianMLPClassifier (digits)",
                   BayesianMLPClassifier(hidden_layer_sizes=(32,), random_state=0, **SHORT),
                   *load_digits(return_X_y=True))
    regression()
