"""Fixtures shared by every layer: scikit-learn's data sets and exact linear posteriors.

Helpers are plain functions in ``tests/support`` (``from support.oracles import check_exact``);
fixtures local to one room live in that room's ``conftest.py``.
"""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.preprocessing import StandardScaler

from support.oracles import exact_linear_posterior


def _standardize(X, y):
    X = (X - X.mean(0)) / X.std(0)
    y = (y - y.mean()) / y.std()
    return X, y


def _ls_noise(X, y):
    resid = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    return float(np.sqrt(resid @ resid / (X.shape[0] - X.shape[1])))


@pytest.fixture(scope="session")
def cancer():
    """scikit-learn's breast cancer data, standardized features."""
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="session")
def noisy_logistic():
    """20,000 rows: uniform minibatches of 100 are far too noisy for a useful step."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20_000, 4))
    y = (X @ np.array([1.0, -2.0, 0.5, 0.0]) + rng.logistic(size=20_000) > 0).astype(int)
    return X, y


@pytest.fixture(scope="session")
def diabetes_problem():
    """All ten standardized diabetes features, standardized y, LS noise."""
    X, y = _standardize(*load_diabetes(return_X_y=True))
    s = _ls_noise(X, y)
    return X, y, s, exact_linear_posterior(X, y, s)


@pytest.fixture(scope="session")
def correlated_problem():
    """20,000 x 20 strongly correlated synthetic design (condition ~ hundreds)."""
    rng = np.random.default_rng(20)
    p, N = 20, 20_000
    A = rng.normal(size=(p, p))
    corr = 0.95 * np.ones((p, p)) + 0.05 * np.eye(p)
    L = np.linalg.cholesky(corr)
    X = rng.normal(size=(N, p)) @ L.T + 0.05 * rng.normal(size=(N, p)) @ A.T / np.sqrt(p)
    y = X @ rng.normal(size=p) * 0.3 + rng.normal(size=N) * 3.0
    X, y = _standardize(X, y)
    s = _ls_noise(X, y)
    return X, y, s, exact_linear_posterior(X, y, s)


@pytest.fixture(scope="session")
def well_conditioned_problem():
    """2,000 x 20 orthogonal-ish design scaled so the posterior is near N(m, I/5).

    Raw-unit curvature about 5 in every direction (condition number ~1.3), so
    the samplers' default hyperparameters fit without any preconditioner.
    """
    rng = np.random.default_rng(3)
    N = 2000
    X = rng.normal(size=(N, 20)) * 2.0 / np.sqrt(N)
    y = X @ rng.normal(size=20) + rng.normal(size=N)
    s = 1.0
    return X, y, s, exact_linear_posterior(X, y, s)
