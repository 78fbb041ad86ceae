"""Extreme inputs through the estimators: huge priors, huge or offset targets, logits past
overflow.

Oracles: the exact conjugate posterior, scikit-learn's ``BayesianRidge``, the limits of the
predictive probabilities along a ray, and the location-scale equivariance of the regressor.
"""

import numpy as np
import pytest

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression, BayesianMLPClassifier

from support.settings import QUICK


@pytest.mark.parametrize("offset", [1e6, -1e6])
def test_linear_regression_fits_y_with_a_large_offset(offset):
    from sklearn.linear_model import BayesianRidge

    from skbayes_sg import BayesianLinearRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 * rng.normal(size=200)
    reg = BayesianLinearRegression(normalize_y=False, n_draws=200, n_warmup=200,
                                   random_state=0).fit(X, y + offset)
    ref = BayesianRidge().fit(X, y + offset)
    np.testing.assert_allclose(reg.coef_, ref.coef_, atol=0.05)
    assert abs(reg.intercept_ - ref.intercept_) < 0.1
    assert 0.2 < reg.noise_std_ < 0.4


rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3))
y_reg = X @ [1.0, 2.0, 3.0]


def _exact_linear(X, y, noise_std, prior_scale):
    """Conjugate posterior of ``y = X w + e`` (no intercept): mean and sds."""
    prec = X.T @ X / noise_std**2 + np.eye(X.shape[1]) / prior_scale**2
    cov = np.linalg.inv(prec)
    return cov @ X.T @ y / noise_std**2, np.sqrt(np.diag(cov))


@pytest.mark.parametrize("prior_scale", [1e-150, 1e150])
def test_extreme_prior_scales_sample_the_exact_posterior(prior_scale):
    # both ends of the valid range: the prior-dominated posterior (sd ~ 1e-150) and the
    # likelihood-dominated one (least squares) against the closed form
    rs = np.random.default_rng(1)
    Xe = rs.normal(size=(200, 3))
    ye = Xe @ [1.0, -2.0, 0.5] + rs.normal(size=200)
    reg = BayesianLinearRegression(prior_scale=prior_scale, noise_std=1.0, fit_intercept=False,
                                   normalize_y=False, n_warmup=300, n_draws=300,
                                   random_state=0).fit(Xe, ye)
    mean, sd = _exact_linear(Xe, ye, 1.0, prior_scale)
    coef = reg.sample_posterior()["coef"]
    ess = np.min(reg.diagnostics_["ess"])
    assert np.all(np.abs(coef.mean(0) - mean) / sd < 5 / np.sqrt(ess))
    assert np.all(np.abs(coef.std(0) / sd - 1) < 5 / np.sqrt(2 * ess))


@pytest.mark.parametrize("prior_scale", [1e-150, 1e150])
def test_extreme_prior_scales_logistic_mode(prior_scale):
    # 1e150: the mode is the maximum-likelihood fit; 1e-150: the prior pins it to ~0
    from sklearn.linear_model import LogisticRegression

    rs = np.random.default_rng(2)
    Xl = rs.normal(size=(300, 3))
    yl = (Xl @ [1.0, -1.0, 0.5] + rs.logistic(size=300) > 0).astype(int)
    est = BayesianLogisticRegression(prior_scale=prior_scale, **QUICK).fit(Xl, yl)
    assert np.isfinite(est.draws_).all()
    coef = est.model_.unpack(est.mode_[None, :])["coef"].ravel()
    if prior_scale > 1:
        mle = LogisticRegression(penalty=None, tol=1e-12, max_iter=1000).fit(Xl, yl)
        np.testing.assert_allclose(coef, mle.coef_.ravel(), rtol=1e-4)
    else:
        assert np.all(np.abs(coef) < 1e-148)


BIG = np.finfo(float).max
EXTREME = np.array([[1e308, 0.0, 0.0], [-1e308, 0.0, 0.0], [1e308, -1e308, 0.0],
                    [BIG, BIG, -BIG], [0.5, 0.0, 1e300]])


def _check_probabilities(clf, rows):
    proba = clf.predict_proba(rows)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(rows), clf.classes_[np.argmax(proba, axis=1)])
    return proba


@pytest.mark.parametrize("n_classes", [2, 3])
def test_glm_probabilities_are_the_limit_along_the_ray(n_classes):
    # Far along x the logits are |x| (x_hat . w_k) + b_k: each draw puts all its mass on
    # argmax_k x_hat . w_k (for two classes: on class 1 iff x_hat . w > 0), so the predictive
    # probability is the fraction of draws that pick each class.
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.4, 0.4] if n_classes == 3 else [0.0])
    clf = BayesianLogisticRegression(n_predict_draws=10_000, **QUICK).fit(X, y)
    proba = _check_probabilities(clf, EXTREME)
    W = clf.sample_posterior()["coef"]                           # (S, K or 1, d)
    x_hat = EXTREME / np.max(np.abs(EXTREME), axis=1, keepdims=True)
    scores = np.einsum("skd,nd->snk", W, x_hat)
    if n_classes == 2:
        expected = np.mean(scores[..., 0] > 0, axis=0)
        np.testing.assert_allclose(proba[:, 1], expected, atol=1e-12)
    else:
        picks = np.argmax(scores, axis=2)                        # (S, n)
        expected = np.stack([np.mean(picks == k, axis=0) for k in range(3)], axis=1)
        np.testing.assert_allclose(proba, expected, atol=1e-12)
    # ordinary rows are computed as before, whatever rows they come with (to rounding: BLAS
    # may pick another kernel for another number of rows)
    both = clf.predict_proba(np.vstack([X[:5], EXTREME]))
    np.testing.assert_allclose(both[:5], clf.predict_proba(X[:5]), rtol=1e-13, atol=0)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_mlp_probabilities_are_finite_and_at_their_limit(n_classes):
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.4, 0.4] if n_classes == 3 else [0.0])
    clf = BayesianMLPClassifier(hidden_layer_sizes=(5,), n_warmup=50, n_draws=10, thin=2,
                                random_state=0).fit(X, y)
    proba = _check_probabilities(clf, EXTREME[:4])
    # the limit: the same probabilities 1e250 times closer in (still saturated) -- a ReLU
    # network is positively homogeneous far out, so the softmax no longer changes
    np.testing.assert_allclose(clf.predict_proba(EXTREME[:4] * 1e-250), proba, atol=1e-9)


def _exact_output(x, coef, intercept):
    """``x . coef + intercept`` in exact rational arithmetic, as the nearest float (or +-inf)."""
    from fractions import Fraction

    value = sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, coef))
    value += Fraction(float(intercept))
    try:
        return float(value)
    except OverflowError:
        return np.inf if value > 0 else -np.inf


def test_regressor_predictions_never_nan():
    # coefficients ~ (3, -3, 0.5): at [1e308, 1e308, 0] each product overflows (inf - inf = nan
    # in the plain sum) but the prediction ~1e308 (w0 + w1) is representable
    y = X @ [3.0, -3.0, 0.5] + np.random.default_rng(3).normal(size=60)
    reg = BayesianLinearRegression(noise_std=1.0, **{**QUICK, "n_chains": 2}).fit(X, y)
    rows = np.vstack([EXTREME, [[1e308, 1e308, 0.0]]])
    mean, std = reg.predict(rows, return_std=True)
    assert not np.isnan(mean).any() and not np.isnan(std).any()
    assert np.all(std > 0)
    expected = [_exact_output(x, reg.coef_, reg.intercept_) for x in rows]
    np.testing.assert_allclose(mean, expected, rtol=1e-8)
    assert np.isfinite(mean[-1])
    # std at x = s x_hat: s times the sd of x_hat . w over the draws (the noise, 1, and the
    # intercept's share, 1/s, are negligible at s = 1e308)
    s, coef = 1e308, reg.sample_posterior()["coef"]
    np.testing.assert_allclose(std[-1], s * np.std(coef @ (rows[-1] / s)), rtol=1e-6)
    assert not np.isnan(reg.sample_y(rows, 5, random_state=0)).any()


def test_a_huge_y_is_standardized_without_overflow():
    # normalize_y makes the fit equivariant in y's scale: y and 1e190 y give the same chains;
    # with one value of 1e200, np.std(y) overflows and must not reach the model
    y1 = y_reg.copy()
    y1[0] = 1e10
    y2 = y1 * 1e190
    kw = {**QUICK, "n_chains": 2}
    reg1 = BayesianLinearRegression(**kw).fit(X, y1)
    reg2 = BayesianLinearRegression(**kw).fit(X, y2)
    assert np.isfinite(reg2.y_scale_) and np.isfinite(reg2.coef_).all()
    np.testing.assert_allclose(reg2.coef_, 1e190 * reg1.coef_, rtol=1e-6)
    np.testing.assert_allclose(reg2.y_scale_, 1e190 * reg1.y_scale_, rtol=1e-12)
    with pytest.raises(ValueError, match="normalize_y=True"):
        BayesianLinearRegression(normalize_y=False, **kw).fit(X, y2)


def test_location_scale_oracle():
    from skbayes_sg.utils import location_scale, standardize

    y = np.array([1.0, -2.0, 4.0, 0.5])
    for c in (1.0, 1e300, 1e-300):
        mean, scale = location_scale(y * c)
        np.testing.assert_allclose([mean, scale], [np.mean(y) * c, np.std(y) * c], rtol=1e-14)
        np.testing.assert_allclose(standardize(y * c, mean, scale),
                                   (y - y.mean()) / y.std(), rtol=1e-13)
    assert location_scale(np.array([3.0, 3.0])) == (3.0, 1.0)
    assert location_scale(y, center=False) == (0.0, np.std(y))
    z = standardize(np.array([BIG, -BIG]), *location_scale(np.array([BIG, -BIG])))
    np.testing.assert_allclose(z, [1.0, -1.0])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_decision_function_never_nan(n_classes):
    # coefficients of both signs above 1: at [BIG, BIG] the two products overflow with opposite
    # signs (inf - inf, or one inf first) although the score is finite; exact rationals decide
    y = np.digitize(X[:, 0] - X[:, 1], [-0.4, 0.4] if n_classes == 3 else [0.0])
    clf = BayesianLogisticRegression(**QUICK).fit(X * 5, y)
    rows = np.vstack([EXTREME, [[BIG, BIG, 0.0], [BIG, -BIG, 1.0], [-BIG, BIG, 0.0]]])
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.isfinite(rows @ clf.coef_.T).all()  # the plain product overflows
    scores = clf.decision_function(rows).reshape(len(rows), -1)
    assert not np.isnan(scores).any()
    for k in range(scores.shape[1]):
        expected = [_exact_output(x, clf.coef_[k], clf.intercept_[k]) for x in rows]
        np.testing.assert_allclose(scores[:, k], expected, rtol=1e-8)
