"""float32 data through the estimators: the same posterior as float64.

Oracles: the Monte-Carlo error of two independent fits (their ESS), and bit-identical draws
with any ``n_jobs``.
"""

import numpy as np
import pytest

from skbayes_sg.fitting import FitConfig
from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression


def _glm_data(kind, seed=0, n=3000):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    z = X @ np.array([1.0, -1.0, 0.5, 0.0])
    if kind == "binary":
        return X, (z + rng.logistic(size=n) > 0).astype(int)
    if kind == "softmax":
        return X, np.digitize(z + rng.logistic(size=n), [-1.0, 1.0])
    return X, z + rng.normal(size=n)


@pytest.mark.parametrize("kind", ["binary", "softmax", "regression"])
def test_float32_fit_agrees_with_float64_within_monte_carlo_error(kind):
    """Two independent default fits (different seeds) on the same values, float32 and float64.

    Posterior means must agree within 5 combined Monte-Carlo standard errors (``sd / sqrt(ESS)``
    from each fit's own ESS), posterior sds within 5 standard errors of an sd ratio
    (``sqrt(1 / (2 ESS_32) + 1 / (2 ESS_64))``).
    """
    X32, y = _glm_data(kind)
    Est = BayesianLinearRegression if kind == "regression" else BayesianLogisticRegression
    fits = [Est(random_state=seed).fit(X, y)
            for seed, X in [(0, X32), (1, X32.astype(np.float64))]]
    stats = []
    for est in fits:
        draws = est.sample_posterior()
        flat = np.concatenate([draws["coef"].reshape(len(draws["coef"]), -1),
                               np.reshape(draws["intercept"], (len(draws["coef"]), -1))], axis=1)
        ess = np.asarray(est.diagnostics_["ess"], dtype=float)[:flat.shape[1]]
        stats.append((flat.mean(0), flat.std(0), ess))
    (m32, s32, e32), (m64, s64, e64) = stats
    assert np.all(np.abs(m32 - m64) <= 5 * np.sqrt(s32**2 / e32 + s64**2 / e64))
    assert np.all(np.abs(s32 / s64 - 1) <= 5 * np.sqrt(0.5 / e32 + 0.5 / e64))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_float32_fit_is_reproducible_and_independent_of_n_jobs():
    X32, y = _glm_data("binary", n=500)
    kw = dict(random_state=3, n_chains=4, n_warmup=100, n_draws=200, step_size=0.2)

    def draws(**extra):
        est = BayesianLogisticRegression(**kw, **extra)
        est._fit_config = FitConfig(parallel_min_seconds=0.0)  # workers even for short chains
        return est.fit(X32, y).sample_posterior()["coef"]

    a, b, c = draws(), draws(), draws(n_jobs=2)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
