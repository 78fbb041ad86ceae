"""scikit-learn's estimator checks on fast instances of the four estimators."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skbayes_sg import (
    BayesianLinearRegression,
    BayesianLogisticRegression,
    BayesianMLPClassifier,
    BayesianMLPRegressor,
)

from support.settings import QUICK


ESTIMATORS = [
    BayesianLogisticRegression(**QUICK),
    BayesianLogisticRegression(sampler="sgld", subsampling="uniform", **QUICK),
    BayesianLogisticRegression(sampler="hmc", subsampling="full", **QUICK),
    BayesianLinearRegression(**QUICK),
    BayesianLinearRegression(noise_std=1.0, sampler="sgnht", **QUICK),
    BayesianMLPClassifier(hidden_layer_sizes=(8,), n_warmup=50, n_draws=20, thin=2,
                          n_chains=2, random_state=0),
    BayesianMLPRegressor(hidden_layer_sizes=(8,), n_warmup=50, n_draws=20, thin=2, n_chains=2,
                         random_state=0),
]


def _expected_failed_checks(estimator):
    # Integer weights give the same posterior as repeated rows, but a different number of rows
    # draws different minibatches, so the predictions agree only within Monte-Carlo error:
    # tests/test_data_contract.py checks the equivalence at the mode and within that error.
    reason = "stochastic draws: equal only within Monte-Carlo error (see test_data_contract)"
    return {"check_sample_weight_equivalence_on_dense_data": reason,
            "check_sample_weight_equivalence_on_sparse_data": reason}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
