"""Reference problems of ``calibration.py``: data, the library's potential, compared quantities.

Each problem is fitted in the library's own coordinates (``y`` normalized for the regressor,
targets coded as the estimator codes them) with exactly the library's prior
(``skbayes_sg/models``: weights ``N(0, prior_scale^2)``; logistic intercepts
``N(0, (10 max(prior_scale, 1))^2)``; regressor intercept ``N(0, (10 (|mean y_n| + sd y_n +
prior_scale))^2)`` and, with the noise inferred, ``log sigma`` under ``sigma^2 ~ InvGamma(1,
0.01 var(y_n))``).  ``potential(problem, xp)`` writes that negative log posterior once for numpy
and for jax.numpy; ``_references.check_potential`` compares it with the fitted estimator's
``model_`` and ``prior_`` before any reference is trusted.
"""

from dataclasses import dataclass, field

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.preprocessing import StandardScaler

from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression

__all__ = ["Problem", "make_estimator", "make_problems", "potential", "prior", "quantities",
           "targets", "to_named"]


@dataclass
class Problem:
    """One reference problem: data, estimator kind and fixed parameters, reference kind."""

    name: str
    kind: str  # "logistic" or "linear"
    X: np.ndarray
    y: np.ndarray
    reference: str  # "exact" (closed form) or a key of _references.SAMPLERS
    params: dict = field(default_factory=dict)  # estimator parameters fixed for the problem
    note: str = ""
    y_scaling: tuple = None  # the regressor's (y_mean_, y_scale_), read from a fit


    @property
    def n_classes(self):
        return int(np.unique(self.y).size) if self.kind == "logistic" else 0

    @property
    def rows(self):
        """Weight rows: 1 (binary, regression) or K (softmax)."""
        return self.n_classes if self.n_classes > 2 else 1


def _standardize(X):
    return (X - X.mean(0)) / X.std(0)


def _correlated(rng, n, d, rho):
    """``n x d`` standardized Gaussian features with equicorrelation ``rho``."""
    z = rng.normal(size=(n, d)) * np.sqrt(1 - rho) + rng.normal(size=(n, 1)) * np.sqrt(rho)
    return _standardize(z)


def _bernoulli(rng, z):
    return (rng.random(z.shape) < 1.0 / (1.0 + np.exp(-z))).astype(int)


def _exact_linear(name, X, y, note):
    """Known noise at the least-squares residual sd: the posterior is Gaussian."""
    X1 = np.c_[X, np.ones(len(X))]
    resid = y - X1 @ np.linalg.lstsq(X1, y, rcond=None)[0]
    s = float(np.sqrt(resid @ resid / (X1.shape[0] - X1.shape[1])))
    return Problem(name, "linear", X, y, "exact", {"noise_std": s}, note)


def make_problems(quick=False):
    """The reference problems (``quick``: the two cheapest, smaller)."""
    rng = np.random.default_rng(20260)
    Xd, yd = load_diabetes(return_X_y=True)
    Xd = _standardize(Xd)
    X4 = rng.normal(size=(400, 5))
    y4 = _bernoulli(rng, X4 @ np.array([1.5, -1.0, 0.5, 0.0, 2.0]) + 0.3)
    out = [_exact_linear("linear_exact_diabetes", Xd, yd,
                         "diabetes (442 x 10), y in its own units, noise fixed"),
           Problem("logistic_400", "logistic", X4, y4, "nuts",
                   note="synthetic 400 x 5 logistic (the issue's user-set step cases)")]
    if quick:
        return out
    Xc = _correlated(rng, 20_000, 10, 0.8)
    wc = rng.normal(size=10) * 0.5
    Xs = rng.normal(size=(2000, 5))
    Ws = rng.normal(size=(4, 5))
    ps = np.exp(Xs @ Ws.T)
    ys = (rng.random((2000, 1)) > np.cumsum(ps / ps.sum(1, keepdims=True), 1)).sum(1)
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xl = _correlated(rng, 20_000, 10, 0.8)
    yl = 300.0 + 50.0 * (Xl @ rng.normal(size=10) + rng.normal(size=20_000))
    out += [
        _exact_linear("linear_exact_corr20k", Xl, yl,
                      "synthetic 20,000 x 10, equicorrelation 0.8, y = 300 + 50 (Xw + e)"),
        Problem("logistic_breast_cancer", "logistic", _standardize(Xb), yb, "nuts",
                note="breast cancer (569 x 30, standardized)"),
        Problem("logistic_corr20k", "logistic", Xc, _bernoulli(rng, Xc @ wc - 0.5), "nuts",
                note="synthetic 20,000 x 10, equicorrelation 0.8"),
        Problem("softmax_4class", "logistic", Xs, ys, "nuts",
                note="synthetic 2,000 x 5, 4 classes; compared class-centred"),
        Problem("linear_noise_diabetes", "linear", Xd, yd, "nuts",
                note="diabetes (442 x 10), noise inferred, y in its own units"),
    ]
    # drawn after all the others, so their data (and cached references) are unchanged
    Xm = _correlated(rng, 20_000, 8, 0.5)
    pm = np.exp(Xm @ (0.7 * rng.normal(size=(5, 8))).T)
    ym = (rng.random((20_000, 1)) > np.cumsum(pm / pm.sum(1, keepdims=True), 1)).sum(1)
    out.append(Problem("softmax_20k", "logistic", Xm, ym, "nuts",
                       note="synthetic 20,000 x 8, 5 classes, equicorrelation 0.5 (from 10,000 "
                            "rows the default runs SGHMC's ABOBA splitting); compared "
                            "class-centred"))
    out.append(_digits())
    return out + rare_problems() + [_unequal_classes()]


def _rare(name, n, k, seed):
    """``n x 3`` standard normal rows, ``y = 1`` on the ``k`` rows of largest ``x w + e``
    (``e`` logistic): a handful of positives, where the intercept's posterior has an
    exponential tail (issue 37)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    score = X @ np.array([1.0, -0.5, 0.0]) + rng.logistic(size=n)
    y = np.zeros(n, dtype=int)
    y[np.argsort(score)[-k:]] = 1
    return Problem(name, "logistic", X, y, "nuts",
                   note=f"synthetic {n:,} x 3, {k} positive row{'s' * (k > 1)} (rare event)")


def rare_problems():
    """The rare-event problems (own generators: the other problems' data are unchanged)."""
    return [_rare("logistic_rare4_10k", 10_000, 4, 37), _rare("logistic_rare1_10k", 10_000, 1, 38),
            _rare("logistic_rare4_100k", 100_000, 4, 39),
            _rare("logistic_rare4_1m", 1_000_000, 4, 40)]


def _digits():
    """sklearn digits, standardized as a user would (StandardScaler: constant pixels stay 0):
    the exact route's multiclass case (1,797 x 64, 10 classes, 650 parameters)."""
    Xg, yg = load_digits(return_X_y=True)
    return Problem("softmax_digits", "logistic", StandardScaler().fit_transform(Xg), yg,
                   "whitened_nuts",
                   note="sklearn digits (1,797 x 64, 10 classes, StandardScaler; the default "
                        "runs HMC on the exact gradient); compared class-centred")


def _unequal_classes(seed=41):
    """10 classes of very unequal sizes on 50 correlated features (own generator): the
    minibatch route's multiclass case, where rare classes have the least Gaussian posteriors
    (issue 37)."""
    rng = np.random.default_rng(seed)
    X = _correlated(rng, 10_000, 50, 0.5)
    logits = X @ (0.3 * rng.normal(size=(10, 50))).T + np.linspace(2.5, -2.5, 10)
    p = np.exp(logits - logits.max(1, keepdims=True))
    y = (rng.random((10_000, 1)) > np.cumsum(p / p.sum(1, keepdims=True), 1)).sum(1)
    sizes = np.bincount(y, minlength=10)
    return Problem("softmax_unequal", "logistic", X, y, "whitened_nuts",
                   note=f"synthetic 10,000 x 50, 10 classes of {sizes.min()} to {sizes.max()} "
                        "rows, equicorrelation 0.5 (the default runs on minibatches); compared "
                        "class-centred")


def make_estimator(problem, **params):
    """The problem's estimator with its fixed parameters and ``params``."""
    cls = BayesianLogisticRegression if problem.kind == "logistic" else BayesianLinearRegression
    return cls(**problem.params, **params)


def targets(problem):
    """``(y_enc, y_mean, y_scale)`` as the estimator codes the target (defaults)."""
    if problem.kind == "logistic":
        codes = np.unique(problem.y, return_inverse=True)[1]
        return (np.where(codes == 1, 1.0, -1.0) if problem.rows == 1 else codes), 0.0, 1.0
    y_mean, y_scale = problem.y_scaling or (np.mean(problem.y), np.std(problem.y))
    return (problem.y - y_mean) / y_scale, y_mean, y_scale


def prior(problem, y_enc, prior_scale=1.0):
    """Diagonal prior precision of ``[coef, intercept]`` and the InvGamma ``b`` (or None)."""
    d, R = problem.X.shape[1], problem.rows
    if problem.kind == "logistic":
        b_scale = 10.0 * max(prior_scale, 1.0)
    else:
        b_scale = 10.0 * (abs(float(np.mean(y_enc))) + float(np.std(y_enc)) + prior_scale)
    prec = np.r_[np.full(R * d, prior_scale**-2.0), np.full(R, b_scale**-2.0)]
    inferred = problem.kind == "linear" and "noise_std" not in problem.params
    return prec, (0.01 * float(np.var(y_enc)) if inferred else None)


def potential(problem, xp=np):
    """``(U, p)``: the library's negative log posterior ``U(theta)`` (up to a constant)."""
    y_enc, _, y_scale = targets(problem)
    prec, noise_b = prior(problem, y_enc)
    X = xp.asarray(problem.X)
    y = xp.asarray(y_enc.astype(np.int32) if problem.rows > 1 else y_enc)
    d, R = problem.X.shape[1], problem.rows
    nw = R * d
    p = nw + R + (noise_b is not None)

    def U(theta):
        lin = theta[:nw + R]
        prior = 0.5 * xp.sum(xp.asarray(prec) * lin * lin)
        if problem.kind == "linear":
            e = y - X @ theta[:d] - theta[d]
            if noise_b is None:
                return prior + 0.5 * xp.sum(e * e) / (problem.params["noise_std"] / y_scale) ** 2
            t = theta[-1]
            return (prior + 0.5 * xp.exp(-2.0 * t) * xp.sum(e * e) + (y.shape[0] + 2.0) * t
                    + noise_b * xp.exp(-2.0 * t))
        if R == 1:
            z = X @ theta[:d] + theta[d]
            return prior + xp.sum(xp.logaddexp(0.0, -y * z))
        Z = X @ theta[:nw].reshape(R, d).T + theta[nw:]
        zmax = xp.max(Z, axis=1, keepdims=True)
        lse = zmax[:, 0] + xp.log(xp.sum(xp.exp(Z - zmax), axis=1))
        return prior + xp.sum(lse) - xp.sum(xp.take_along_axis(Z, y[:, None], axis=1))

    return U, p


def to_named(problem, theta):
    """Draws ``theta (..., p)`` in fitted coordinates -> named arrays in the user's units."""
    _, y_mean, y_scale = targets(problem)
    d, R = problem.X.shape[1], problem.rows
    nw = R * d
    coef = theta[..., :nw].reshape(*theta.shape[:-1], R, d)
    out = {"coef": coef if problem.kind == "logistic" else coef[..., 0, :] * y_scale,
           "intercept": theta[..., nw:nw + R]}
    if problem.kind == "linear":
        out["intercept"] = out["intercept"][..., 0] * y_scale + y_mean
        if theta.shape[-1] > nw + 1:
            out["noise_std"] = np.exp(theta[..., -1]) * y_scale
    return out


def quantities(named, centre=False):
    """Compared quantities ``(n, q)`` and their labels from named draws ``(n, ...)``.

    ``centre``: softmax coefficients and intercepts minus their mean over the classes (the
    identified form; the mean over classes is fixed only by the prior).
    """
    cols, labels = [], []
    for key in ("coef", "intercept", "noise_std"):
        if key not in named:
            continue
        a = np.asarray(named[key], dtype=float)
        if centre:
            axis = -2 if key == "coef" else -1
            a = a - a.mean(axis=axis, keepdims=True)
        a = a.reshape(a.shape[0], -1)
        cols.append(a)
        labels += [f"{key}[{i}]" for i in range(a.shape[1])] if a.shape[1] > 1 else [key]
    return np.concatenate(cols, axis=1), labels
