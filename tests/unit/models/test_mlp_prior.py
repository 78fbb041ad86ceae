"""The networks' prior: fixed or fan-in scaled weight variances."""

import numpy as np
import pytest

from skbayes_sg import BayesianMLPClassifier, BayesianMLPRegressor
from skbayes_sg.models import MLPModel, MLPRegressionModel


@pytest.mark.parametrize("Model", [MLPModel, MLPRegressionModel])
def test_fan_in_divides_each_layers_weight_variance_by_its_inputs(Model):
    model = Model((5, 7, 3 if Model is MLPModel else 1))
    fixed = model.prior_precision(2.0, 10.0)
    scaled = model.prior_precision(2.0, 10.0, fan_in=True)
    named = model.unpack(scaled[None, :] / fixed[None, :])
    assert np.all(named["coef_0"] == 5) and np.all(named["coef_1"] == 7)
    assert np.all(named["intercept_0"] == 1) and np.all(named["intercept_1"] == 1)
    if Model is MLPRegressionModel:
        assert scaled[-1] == fixed[-1] == 0.0  # log sigma: the noise prior's


@pytest.mark.parametrize("Est", [BayesianMLPClassifier, BayesianMLPRegressor])
def test_estimators_pass_prior_scaling_to_the_prior(Est):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))
    y = rng.integers(0, 2, 60) if Est is BayesianMLPClassifier else X[:, 0]
    kw = dict(hidden_layer_sizes=(4,), prior_scale=0.5, n_warmup=5, n_draws=5, max_doublings=0,
              random_state=0)
    fixed, scaled = (Est(prior_scaling=s, **kw).fit(X, y).prior_.precision
                     for s in ("none", "fan_in"))
    est = Est(**kw).fit(X, y)
    coef = est.model_.unpack(np.stack([fixed, scaled]))["coef_0"]
    assert np.all(coef[0] == 4.0) and np.all(coef[1] == 6 * 4.0)  # 1 / 0.5^2, times 6 inputs
