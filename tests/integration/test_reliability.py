"""Reliability: row weights and ``normalize_y``, ``class_weight`` validation, the checks of dask
input, and extreme but finite values.

Oracles: the exact conjugate posterior of repeated rows, the fit without a row (bitwise), the
same fit on data scaled by a power of ten (equivariance), and the in-memory checks' errors.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skbayes_sg import (BayesianLinearRegression, BayesianLogisticRegression,
                        BayesianMLPClassifier)
from skbayes_sg.fitting import FitConfig
from skbayes_sg.subsampling import ControlVariates
from skbayes_sg.utils import location_scale

rng = np.random.default_rng(0)
X = rng.standard_normal((400, 5))
y = (X[:, 0] + rng.standard_normal(400) > 0).astype(int)
yr = X @ [1.0, -1.0, 0.5, 0.0, 0.0] + rng.standard_normal(400)
FAST = dict(n_warmup=100, n_draws=100, n_chains=2, random_state=0, max_doublings=0)


def _quiet(fit, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short runs warn about convergence
        return fit(*args, **kwargs)


# ------------------------------------------------- item 2: sample_weight and normalize_y

def _small_problem():
    """20 rows; row 0 counts 40 times (integer weight) -- and the data with it repeated."""
    r = np.random.default_rng(1)
    Xs = r.standard_normal((20, 2))
    ys = Xs @ [1.0, -0.5] + 0.5 * r.standard_normal(20)
    ys[0] += 4.0  # the heavy row sits off the line: its weight moves the moments
    w = np.ones(20)
    w[0] = 40.0
    rep = np.r_[np.zeros(39, dtype=int), np.arange(20)]
    return Xs, ys, w, Xs[rep], ys[rep]


def _exact_posterior(Xr, yr_, noise_std, prior_scale):
    """Mean and sd of (coef, intercept) in y's units: the conjugate posterior of the model
    ``normalize_y`` fits (prior N(0, prior_scale^2) on the weights and, as documented,
    N(0, (10 (|mean| + sd + prior_scale))^2) = N(0, (10 (1 + prior_scale))^2) on the intercept
    of the standardized targets)."""
    m, s = np.mean(yr_), np.std(yr_)
    z, sig = (yr_ - m) / s, noise_std / s
    X1 = np.column_stack([Xr, np.ones(len(Xr))])
    prec = X1.T @ X1 / sig**2 + np.diag([prior_scale**-2] * Xr.shape[1]
                                        + [(10 * (1 + prior_scale)) ** -2])
    cov = np.linalg.inv(prec)
    mean = cov @ X1.T @ z / sig**2
    mean = np.r_[mean[:-1] * s, mean[-1] * s + m]
    return mean, np.sqrt(np.diag(cov)) * s


def test_integer_weights_standardize_like_repeated_rows():
    """normalize_y's moments are weighted as frequencies: those of the repeated data."""
    Xs, ys, w, Xr, yr_ = _small_problem()
    a = _quiet(BayesianLinearRegression(**FAST).fit, Xs, ys, sample_weight=w)
    b = _quiet(BayesianLinearRegression(**FAST).fit, Xr, yr_)
    np.testing.assert_allclose([a.y_mean_, a.y_scale_], [b.y_mean_, b.y_scale_], rtol=1e-12)
    assert location_scale(ys, weight=w) == pytest.approx((np.mean(yr_), np.std(yr_)), rel=1e-12)


def test_integer_weights_give_the_repeated_rows_posterior():
    """With the noise fixed the posterior is Gaussian: the weighted fit's mean is the exact
    posterior mean of the repeated rows (unweighted moments put it 0.35 sd off)."""
    Xs, ys, w, Xr, yr_ = _small_problem()
    mean, sd = _exact_posterior(Xr, yr_, noise_std=0.5, prior_scale=0.3)
    est = _quiet(BayesianLinearRegression(noise_std=0.5, prior_scale=0.3, random_state=0,
                                          max_doublings=0).fit, Xs, ys, sample_weight=w)
    got = np.r_[est.coef_, est.intercept_]
    ess = np.maximum(est.diagnostics_["ess"], 50.0)  # (coef, intercept) in the draws' order
    se = sd / np.sqrt(ess)
    assert np.all(np.abs(got - mean) < 5 * se + 0.02 * sd), (got - mean) / sd
    draws = est.sample_posterior()
    np.testing.assert_allclose(draws["coef"].std(axis=0), sd[:-1], rtol=0.15)


def test_integer_weights_match_repeated_rows_with_inferred_noise():
    """Inferred noise (weighted prior moments too): the weighted and the repeated fits agree
    within their Monte-Carlo errors."""
    Xs, ys, w, Xr, yr_ = _small_problem()
    kw = dict(prior_scale=0.3, random_state=0, max_doublings=0)
    a = _quiet(BayesianLinearRegression(**kw).fit, Xs, ys, sample_weight=w)
    b = _quiet(BayesianLinearRegression(**kw).fit, Xr, yr_)
    da_, db = a.sample_posterior(), b.sample_posterior()
    for key in ("coef", "intercept", "noise_std"):
        sd = db[key].std(axis=0)
        diff = np.abs(da_[key].mean(axis=0) - db[key].mean(axis=0))
        assert np.all(diff < 0.1 * sd), (key, diff / sd)


@pytest.mark.parametrize("others", ["ones", "varied"])
def test_zero_weight_outlier_is_the_fit_without_the_row(others):
    """A row of weight 0 takes no part, not even in normalize_y's moments: bitwise the fit
    without it (y = 1e4 there moved coef_ by ~1 sd)."""
    y1 = yr.copy()
    y1[7] = 1e4
    w = np.ones(400) if others == "ones" else np.random.default_rng(2).uniform(0.5, 2, 400)
    w[7] = 0.0
    keep = np.arange(400) != 7
    a = _quiet(BayesianLinearRegression(**FAST).fit, X, y1, sample_weight=w)
    w_kept = None if others == "ones" else w[keep]
    b = _quiet(BayesianLinearRegression(**FAST).fit, X[keep], y1[keep], sample_weight=w_kept)
    np.testing.assert_array_equal(a.draws_, b.draws_)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert (a.y_mean_, a.y_scale_, a.noise_std_) == (b.y_mean_, b.y_scale_, b.noise_std_)


# ------------------------------------------------- item 3: class_weight validation

CLASSIFIERS = [BayesianLogisticRegression,
               lambda **kw: BayesianMLPClassifier(hidden_layer_sizes=(3,), **kw)]


@pytest.mark.parametrize("Est", CLASSIFIERS)
@pytest.mark.parametrize("class_weight, error, match", [
    ({0: -1, 1: 1}, ValueError, "class_weight values must be finite and non-negative"),
    ({0: np.nan, 1: 1}, ValueError, "class_weight values must be finite and non-negative"),
    ({0: np.inf, 1: 1}, ValueError, "class_weight values must be finite and non-negative"),
    ({0: 0, 1: 0}, ValueError, "class_weight is zero for every class"),
    ({0: "2", 1: 1}, TypeError, "class_weight values must be real numbers"),
    ({0: 1, 5: 2}, ValueError, r"classes, \[1\], are not in class_weight"),  # scikit-learn's
])
def test_class_weight_is_validated(Est, class_weight, error, match):
    """Bad class weights raise naming class_weight (they gave "infs or NaNs", a TypeError)."""
    with pytest.raises(error, match=match):
        Est(class_weight=class_weight, **FAST).fit(X, y)


def test_class_weight_zero_total_with_sample_weight():
    """class_weight times sample_weight summing to zero names both."""
    sw = (y == 0).astype(float)  # only class-0 rows count, and class 0 weighs nothing
    with pytest.raises(ValueError, match="sample_weight times class_weight sums to zero"):
        BayesianLogisticRegression(class_weight={0: 0, 1: 1}, **FAST).fit(X, y, sample_weight=sw)


def test_valid_class_weight_is_the_matching_sample_weight():
    """A valid class_weight is the sample_weight of each row's class: the same draws."""
    a = _quiet(BayesianLogisticRegression(class_weight={0: 2.5, 1: 1}, **FAST).fit, X, y)
    b = _quiet(BayesianLogisticRegression(**FAST).fit, X, y, sample_weight=np.where(y, 1, 2.5))
    np.testing.assert_array_equal(a.draws_, b.draws_)


# ------------------------------------------------- item 4: dask input gets the same checks

da = pytest.importorskip("dask.array")


def _dask(a):
    return da.from_array(a, chunks=(100,) + a.shape[1:])


def _message(fit, *args):
    with pytest.raises(ValueError) as info:
        fit(*args)
    return str(info.value)


def test_dask_classifier_rejects_continuous_labels():
    """A continuous dask y is not 400 classes: the in-memory "Unknown label type" error."""
    expected = _message(BayesianLogisticRegression(**FAST).fit, X, yr)
    assert "Unknown label type" in expected
    assert _message(BayesianLogisticRegression(**FAST).fit, _dask(X), _dask(yr)) == expected


@pytest.mark.parametrize("Est, target", [(BayesianLinearRegression, yr),
                                         (BayesianLogisticRegression, y.astype(float))])
def test_dask_nan_in_y(Est, target):
    """NaN in a dask y raises before any linear algebra (it ended in a LinAlgError)."""
    bad = target.copy()
    bad[5] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN"):
        Est(**FAST).fit(_dask(X), _dask(bad))


@pytest.mark.parametrize("value, match", [(np.nan, "NaN"), (1e308, "X reaches 1e.308")])
def test_dask_X_checks(value, match):
    """NaN, and values whose squares overflow, in a dask X: the in-memory errors."""
    Xb = X.copy()
    Xb[3, 1] = value
    with pytest.raises(ValueError, match=match):
        BayesianLinearRegression(**FAST).fit(_dask(Xb), _dask(yr))


def test_dask_huge_y_standardized_as_in_memory():
    """One y of 1e200: y_scale_ is the in-memory (finite) one, predictions are finite (it was
    y_scale_ = inf and predict -inf)."""
    y1 = yr.copy()
    y1[0] = 1e200
    kw = dict(FAST, subsampling="control_variates")
    mem = _quiet(BayesianLinearRegression(**kw).fit, X, y1)
    dsk = _quiet(BayesianLinearRegression(**kw).fit, _dask(X), _dask(y1))
    assert (dsk.y_mean_, dsk.y_scale_) == pytest.approx((mem.y_mean_, mem.y_scale_), rel=1e-12)
    mean, std = (np.asarray(a) for a in dsk.predict(_dask(X[:20]), return_std=True))
    assert np.isfinite(mean).all() and np.isfinite(std).all() and np.all(std > 0)


# ------------------------------------------------- item 5: extreme but finite values

def test_huge_y_gives_finite_outputs_in_y_units():
    """normalize_y is equivariant: y and 1e190 y (max 1e200) give the same chains, so every
    output in y's units scales by 1e190 (noise_std_ was inf, sample_y +-inf, and
    predict(return_std=True) raised OverflowError)."""
    y1 = yr.copy()
    y1[0] = 1e10
    a = _quiet(BayesianLinearRegression(**FAST).fit, X, y1)
    b = _quiet(BayesianLinearRegression(**FAST).fit, X, y1 * 1e190)
    assert np.isfinite(b.noise_std_)
    assert b.noise_std_ == pytest.approx(1e190 * a.noise_std_, rel=1e-9)
    mean_a, std_a = a.predict(X[:10], return_std=True)
    mean_b, std_b = b.predict(X[:10], return_std=True)
    np.testing.assert_allclose(mean_b, 1e190 * mean_a, rtol=1e-9)
    np.testing.assert_allclose(std_b, 1e190 * std_a, rtol=1e-9)
    np.testing.assert_allclose(b.sample_y(X[:10], 3, random_state=0),
                               1e190 * a.sample_y(X[:10], 3, random_state=0), rtol=1e-9)


@pytest.mark.parametrize("Est, target", [(BayesianLogisticRegression, y),
                                         (BayesianLinearRegression, yr)])
def test_huge_X_raises_naming_X(Est, target):
    """1e308 in a training X (a LinAlgError), and float32 X * 1e20 ("infs or NaNs"): a
    ValueError naming X and what to do; float64 X * 1e20 still fits."""
    Xb = X.copy()
    Xb[0, 0] = 1e308
    with pytest.raises(ValueError, match=r"X reaches 1e\+308.*Standardize X"):
        Est(**FAST).fit(Xb, target)
    with pytest.raises(ValueError, match="float32.*pass X as float64"):
        Est(**FAST).fit((X * 1e20).astype(np.float32), target)
    est = _quiet(Est(**FAST).fit, X * 1e20, target)
    assert np.isfinite(est.predict(X * 1e20)).all()


@pytest.mark.parametrize("Est, target", [(BayesianLogisticRegression, y),
                                         (BayesianLinearRegression, yr)])
def test_huge_sample_weight_raises_naming_it(Est, target):
    """Weights summing past 1e20 raise naming sample_weight (a DivergenceError blamed the
    step size); 1e15 per row (sum 4e17) still fits, its posterior 1e-7.5 times as wide."""
    with pytest.raises(ValueError, match=r"sample_weight sums to 4e\+302.*Rescale the weights"):
        Est(**FAST).fit(X, target, sample_weight=np.full(400, 1e300))
    a = _quiet(Est(**FAST).fit, X, target)
    b = _quiet(Est(**FAST).fit, X, target, sample_weight=np.full(400, 1e15))
    ratio = b.draws_.std(axis=(0, 1)) / a.draws_.std(axis=(0, 1))
    assert np.all((ratio > 1e-8) & (ratio < 1e-7))


# ------------------------------------------------- item 8b: what the property tests found

@pytest.mark.parametrize("normalize_y", [False, True])
def test_one_row_regression_without_intercept_fits(normalize_y):
    """One row, inferred noise: the mode search stops at a saddle (the noise level is set by its
    prior alone) and the Laplace covariance was not positive definite (LinAlgError); the
    repaired covariance gives a fit with finite predictions."""
    r = np.random.default_rng(0)
    X1, y1 = r.standard_normal((1, 1)), 0.1 * r.standard_normal(1)
    est = _quiet(BayesianLinearRegression(fit_intercept=False, normalize_y=normalize_y,
                                          **FAST).fit, X1, y1)
    mean, std = est.predict(X1, return_std=True)
    assert np.isfinite(mean).all() and np.isfinite(std).all() and np.all(std > 0)


def test_dense_covariance_is_the_inverse_or_a_positive_definite_repair():
    """A positive definite Hessian gives exactly ``inv(H)``; a saddle gives ``inv(|H|)``
    (eigenvalues in equilibrated coordinates, here a diagonal H), positive definite."""
    from skbayes_sg.preprocessing._laplace import dense_covariance

    H = np.array([[4.0, 1.0], [1.0, 3.0]])
    np.testing.assert_array_equal(dense_covariance(H), np.linalg.inv(H))
    cov = dense_covariance(np.diag([4.0, -1e-3]))
    np.testing.assert_allclose(cov, np.diag([0.25, 1e3]), rtol=1e-12)
    np.linalg.cholesky(dense_covariance(np.array([[3.1e10, -5.6e5], [-5.6e5, 5.07]])))


def test_mismatched_noise_std_raises_naming_it():
    """noise_std=1 for y of scale 1e150: the posterior is 1e-150 wide (sampling diverged);
    a ValueError says to give noise_std in y's units."""
    with pytest.raises(ValueError, match="noise_std in y's units"):
        BayesianLinearRegression(noise_std=1.0, **FAST).fit(X, yr * 1e150)

# ------------------------------------------------ atomic fits, n_jobs, explicit choices (fit engine)

SHORT = dict(n_warmup=50, n_draws=50, n_chains=4, random_state=0, max_doublings=0)

def _workers(est, n_jobs, min_seconds):
    est = est.set_params(n_jobs=n_jobs)
    est._fit_config = FitConfig(parallel_min_seconds=min_seconds)
    return est


@pytest.mark.parametrize("make, n_classes, subsampling", [
    (BayesianLogisticRegression, 2, "auto"),
    (BayesianLogisticRegression, 4, "auto"),
    (BayesianLogisticRegression, 2, ControlVariates(shared_minibatch=True)),
])
def test_draws_do_not_depend_on_n_jobs(make, n_classes, subsampling):
    # chains in 1 or 2 worker groups, shared minibatches included (every group draws chain
    # 0's rows from its own copy of that stream): the same draws, bit for bit
    X, y = make_classification(12_000, 5, n_informative=4, n_redundant=0, n_classes=n_classes,
                               random_state=0)
    serial = make(subsampling=subsampling, **SHORT).fit(X, y)
    parallel = _workers(make(subsampling=subsampling, **SHORT), 2, 0.0).fit(X, y)
    assert parallel.diagnostics_["worker_groups"] == 2
    assert serial.diagnostics_["worker_groups"] == 1
    np.testing.assert_array_equal(parallel.draws_, serial.draws_)


def test_short_sampling_stays_in_process_whatever_n_jobs():
    # workers cost about a second to start; a fit predicted to sample in less than
    # parallel_min_seconds runs its chains here (same draws, as above)
    X, y = make_classification(2000, 5, random_state=0)
    est = _workers(BayesianLogisticRegression(**SHORT), 2, 1e9).fit(X, y)
    assert est.diagnostics_["worker_groups"] == 1
    est = _workers(BayesianLogisticRegression(**SHORT), 2, 0.0).fit(X, y)
    assert est.diagnostics_["worker_groups"] == 2


@pytest.mark.parametrize("make", [BayesianLinearRegression, BayesianLogisticRegression])
def test_a_failed_refit_leaves_the_fitted_estimator_as_it_was(make):
    # fit is atomic: the new state is built aside; a fit that raises changes nothing
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = X @ rng.normal(size=5) + rng.normal(size=400)
    y = y if make is BayesianLinearRegression else (y > 0).astype(int)
    est = make(random_state=0, n_draws=100).fit(X, y)
    before = {k: v for k, v in vars(est).items() if k.endswith("_")}
    pred = est.predict(X[:5])
    bad = y * 1000 + 5 if make is BayesianLinearRegression else np.where(y, "b", "a")
    with pytest.raises(ValueError):
        est.set_params(step_size=1e6).fit(X[:, :3], bad)
    assert {k: v for k, v in vars(est).items() if k.endswith("_")}.keys() == before.keys()
    assert all(vars(est)[k] is v for k, v in before.items())
    np.testing.assert_array_equal(est.predict(X[:5]), pred)


def test_an_interrupted_first_fit_leaves_the_estimator_unfitted(monkeypatch):
    # Ctrl-C during a first fit: check_is_fitted still says unfitted (no half state)
    from sklearn.exceptions import NotFittedError

    from skbayes_sg.fitting import _prepare

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_prepare, "tune", interrupt)
    X, y = make_classification(300, 4, random_state=0)
    est = BayesianLogisticRegression(**SHORT)
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, y)
    assert not [k for k in vars(est) if k.endswith("_")]
    with pytest.raises(NotFittedError):
        est.predict(X)


def test_an_explicit_subsampling_is_honoured_by_the_automatic_sampler():
    # small data where sampler="auto" alone switches to HMC on the full gradient
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    d = BayesianLogisticRegression(subsampling="stratified", **SHORT).fit(X, y).diagnostics_
    assert d["subsampling"] == "stratified" and d["sampler"] != "hmc"
    d = BayesianLogisticRegression(**SHORT).fit(X, y).diagnostics_
    assert (d["subsampling"], d["sampler"]) == ("full", "hmc")
