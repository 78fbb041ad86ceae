"""scikit-learn's estimator checks on fast instances of the three estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skbayes_sg import (
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianMLPClassifier,
)

FAST = dict(n_warmup=50, n_draws=50, n_chains=2, random_state=0)

ESTIMATORS = [
    BayesianLogisticRegression(**FAST),
    BayesianLogisticRegression(sampler="sgld", subsampling="uniform", **FAST),
    BayesianLogisticRegression(sampler="hmc", subsampling="full", **FAST),
    BayesianLinearRegression(**FAST),
    BayesianLinearRegression(noise_std=1.0, sampler="sgnht", **FAST),
    BayesianMLPClassifier(hidden_layer_sizes=(8,), n_warmup=50, n_draws=20, thin=2,
                          n_chains=2, random_state=0),
]


def _expected_failed_checks(estimator):
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
