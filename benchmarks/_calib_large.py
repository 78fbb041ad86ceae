"""The problems ``calibration.py`` runs only when named (issue 37): the 10,000-parameter softmax
problems, softmax on mnist and logistic regression on a9a (these two from the data directory),
and the softmax Hessian in closed form the large references need."""

import numpy as np

from _calib_problems import Problem, _correlated, prior, targets
from _common import load_npz

__all__ = ["a9a_problem", "large_softmax_problems", "mnist_problem", "softmax_hessian"]


def _large_softmax(name, K, d, spread, seed):
    """``K`` classes on ``d`` features (20,000 rows, equicorrelation 0.5, ``K (d + 1)`` about
    10,000 parameters), class sizes spread by intercepts ``linspace(spread, -spread)`` (own
    generator): multiclass at the sizes of issue 37, with its unequal classes."""
    rng = np.random.default_rng(seed)
    X = _correlated(rng, 20_000, d, 0.5)
    logits = X @ (1.5 / np.sqrt(d) * rng.normal(size=(K, d))).T + np.linspace(spread, -spread, K)
    p = np.exp(logits - logits.max(1, keepdims=True))
    y = (rng.random((20_000, 1)) > np.cumsum(p / p.sum(1, keepdims=True), 1)).sum(1)
    sizes = np.bincount(y, minlength=K)
    return Problem(name, "logistic", X, y, "whitened_hmc_large",
                   note=f"synthetic 20,000 x {d:,}, {K} classes of {sizes.min()} to "
                        f"{sizes.max()} rows, equicorrelation 0.5 ({K * (d + 1):,} parameters); "
                        "compared class-centred")


def large_softmax_problems():
    """The two 10,000-parameter softmax problems (built only when asked for: their data and
    references are large)."""
    return [_large_softmax("softmax_10x1000", 10, 1000, 1.2, 43),
            _large_softmax("softmax_100x100", 100, 100, 1.0, 44)]


def mnist_problem(data_dir=None):
    """Softmax on mnist's 60,000 training rows, pixels / 255 (the scaling of the data set's
    README; 67 pixels are 0 in every row, so their coefficients are the prior's), 7,850
    parameters; None without ``mnist.npz`` in the data directory."""
    data = load_npz("mnist", data_dir)
    if data is None:
        return None
    X = data["X_train"].reshape(-1, 784) / 255.0
    return Problem("softmax_mnist", "logistic", X, data["y_train"], "whitened_hmc_mnist",
                   note="mnist 60,000 x 784 pixels / 255, 10 classes (7,850 parameters); "
                        "compared class-centred")


def a9a_problem(data_dir=None):
    """Logistic regression on a9a's 32,561 training rows (123 0/1 indicators, some set in a
    handful of rows: the misfit probe measures 0.27, and ``sampler="auto"`` keeps Euler); None
    without ``a9a.npz``.  Its reference, NUTS on the Laplace-whitened potential, takes about a
    minute."""
    data = load_npz("a9a", data_dir)
    if data is None:
        return None
    return Problem("logistic_a9a", "logistic", data["X_train"].astype(float), data["y_train"],
                   "whitened_nuts",
                   note="a9a 32,561 x 123 indicators (124 parameters)")


def softmax_hessian(problem, theta, chunk=2000):
    """The softmax potential's Hessian at ``theta`` in closed form, ``(p, p)``.

    ``sum_i (diag(p_i) - p_i p_i^T) kron x_i x_i^T`` (``x_i`` with a trailing 1 for the
    intercept) plus the prior's precision, over row chunks, in the layout of :func:`potential`
    (coefficients ``(K, d)`` row-major, then the ``K`` intercepts).
    """
    y_enc = targets(problem)[0]
    X, (n, d), K = problem.X, problem.X.shape, problem.rows
    nw = K * d
    W, b = theta[:nw].reshape(K, d), theta[nw:nw + K]
    H = np.zeros((K * (d + 1), K * (d + 1)))  # (class, feature or intercept) order
    for start in range(0, n, chunk):
        X1 = np.c_[X[start:start + chunk], np.ones(min(chunk, n - start))]
        Z = X1[:, :d] @ W.T + b
        P = np.exp(Z - Z.max(1, keepdims=True))
        P /= P.sum(1, keepdims=True)
        for k in range(K):  # diag(p_i) kron x_i x_i^T: one block per class
            blk = slice(k * (d + 1), (k + 1) * (d + 1))
            H[blk, blk] += (X1 * P[:, k:k + 1]).T @ X1
        M = (P[:, :, None] * X1[:, None, :]).reshape(X1.shape[0], -1)
        H -= M.T @ M
    order = np.r_[(np.arange(K)[:, None] * (d + 1) + np.arange(d)).ravel(),
                  np.arange(K) * (d + 1) + d]
    H = H[np.ix_(order, order)]
    H[np.diag_indices_from(H)] += prior(problem, y_enc)[0]
    return H
