"""The Metropolis audit (fitting._audit) against a Gaussian target, the tail check
(fitting._tail) and the shape probe (fitting._shape)."""

import numpy as np
import pytest
from support.problems import make_problem

from skbayes_sg.fitting._audit import audit_passes, metropolis_audit
from skbayes_sg.fitting._shape import gaussian_misfit
from skbayes_sg.fitting._tail import tail_check


@pytest.fixture(scope="module")
def gaussian():
    # known noise: the posterior is exactly N(mode, covariance) of its Laplace approximation
    posterior, laplace, _ = make_problem("linear_fixed", n=300, mode="fit")
    return posterior, laplace


def _draws(laplace, rng, scale=1.0, shift=0.0, shape=(4, 250)):
    cov = np.asarray(laplace.covariance)
    z = rng.multivariate_normal(np.zeros(cov.shape[0]), cov, size=shape)
    return laplace.mode + shift * np.sqrt(np.diag(cov)) + scale * z


class _Counting:
    """The posterior, counting the per-example evaluations it is asked for."""

    def __init__(self, posterior):
        self.posterior, self.n_rows, self.evals = posterior, posterior.n_rows, 0

    def value_and_grad(self, theta):
        self.evals += theta.shape[0] * self.n_rows
        return self.posterior.value_and_grad(theta)


def test_exact_draws_pass_at_its_level(gaussian):
    # exact draws fail at the family-wise level alpha: at alpha = 0.05, 40 audits, at most 5
    # failures (binomial: P(>= 6) = 1.4%); measured 0.5% at alpha = 0.01 over 200
    posterior, laplace = gaussian
    audits = [metropolis_audit(posterior, laplace, _draws(laplace, rng), rng, alpha=0.05)
              for rng in map(np.random.default_rng, range(40))]
    assert sum(not a.passed for a in audits) <= 5
    assert np.median([np.abs(a.mean_shift).max() for a in audits]) < 0.5
    assert min(a.accept_rate for a in audits) > 0.8


@pytest.mark.parametrize("kind", [{"scale": 2.0}, {"shift": 1.0}])
def test_biased_draws_fail(gaussian, kind):
    posterior, laplace = gaussian
    rng = np.random.default_rng(1)
    audit = metropolis_audit(posterior, laplace, _draws(laplace, rng, **kind), rng)
    assert not audit.passed and audit.p_value < 1e-3
    # two transitions of whitened time ~1.5 nearly refresh a Gaussian: the moments move back
    if "scale" in kind:  # variance 4 -> 1: its standardized square falls by ~3/4
        assert -0.95 < np.mean(audit.var_shift) < -0.55 and np.all(audit.var_shift < 0)
    else:  # the mean moves back by its shift, 1 sd
        assert -1.35 < np.mean(audit.mean_shift) < -0.65 and np.all(audit.mean_shift < 0)


def test_reported_cost_is_what_it_evaluated(gaussian):
    posterior, laplace = gaussian
    counting = _Counting(posterior)
    rng = np.random.default_rng(0)
    audit = metropolis_audit(counting, laplace, _draws(laplace, rng), rng, n_positions=40,
                             n_transitions=3)
    p = laplace.mode.shape[0]
    assert audit.grad_evals == counting.evals == audit_passes(p, 3) * 40 * posterior.n_rows
    assert audit.data_passes == counting.evals / posterior.n_rows


def test_the_audit_draws_only_from_its_own_stream(gaussian):
    posterior, laplace = gaussian
    draws = _draws(laplace, np.random.default_rng(0))
    a = metropolis_audit(posterior, laplace, draws, np.random.default_rng(5))
    b = metropolis_audit(posterior, laplace, draws.copy(), np.random.default_rng(5))
    np.testing.assert_array_equal(a.z_mean, b.z_mean)


def test_shape_probe_sees_an_exponential_tail():
    # a Gaussian posterior is its own quadratic; one positive row among 5,000 is not
    from skbayes_sg.models import GaussianPrior, LogisticModel, Posterior
    from skbayes_sg.preprocessing import find_mode, laplace_at

    posterior, laplace = make_problem("linear_fixed", n=300, mode="fit")[:2]
    assert gaussian_misfit(posterior, laplace).misfit < 1e-6
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 2))
    y = -np.ones(5000)
    y[0] = 1.0
    model = LogisticModel(2, 2)
    rare = Posterior(model, GaussianPrior(model.prior_precision(1.0)), X, y)
    mode = find_mode(rare, rng)
    misfit = gaussian_misfit(rare, laplace_at(rare, mode.theta, "dense", mode.hessian)[0])
    assert misfit.misfit > 0.5 and misfit.axis == 2  # the intercept's axis
    assert misfit.grad_evals == 7 * 5000


def test_tail_check_passes_exact_draws_and_sees_an_excursion(gaussian):
    # exact draws: U - U(mode) is chi2_p / 2, far under the log-concave bound; one chain's
    # excursion to 8 sd along every axis (U rises by ~p * 32) is beyond it
    from scipy import stats

    posterior, laplace = gaussian
    gauss = stats.gamma.isf(1e-3 / 1000, laplace.mode.size / 2)  # chi2_p / 2's own quantile
    for seed in range(10):
        draws = _draws(laplace, np.random.default_rng(seed))
        check = tail_check(posterior, laplace, draws)
        assert check.passed and check.excess < gauss < check.bound
    draws[2, 100:110] = laplace.mode + 8 * np.sqrt(np.diag(np.asarray(laplace.covariance)))
    check = tail_check(posterior, laplace, draws, n_points=4)
    assert not check.passed and check.excess > check.bound
    assert check.grad_evals == 5 * posterior.n_rows


def test_log_concave_is_declared_where_it_holds():
    # the tail check's bound holds only for log-concave posteriors
    from skbayes_sg.models import GaussianLinearModel, LogisticModel, MLPModel

    assert LogisticModel(3, 2).log_concave and LogisticModel(3, 4).log_concave
    assert GaussianLinearModel(3, True, noise_std=1.0).log_concave
    assert not GaussianLinearModel(3, True).log_concave  # inferred noise: log_noise_std
    assert not MLPModel((3, 4, 2), "tanh").log_concave
