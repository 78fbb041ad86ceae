"""Subsampling protocol: strategy objects that build gradient estimators.

A *strategy* (``Uniform()``, ``ControlVariates()``, ...) only stores
hyperparameters (``get_params``/``set_params``).  In ``fit``,
``strategy.build(problem, batch_size=..., rng=...)`` does all heavy
preprocessing once and returns a :class:`GradientEstimator`, which is built
from two orthogonal pieces:

* an *index sampler* -- WHERE to look: ``init(rngs, n_chains) -> state`` and
  ``draw(rngs, state) -> (idx (C, b), weight (C, b) or None, scale, state)``
  such that ``scale * sum_b weight_i grad f_i`` is unbiased for the full sum;
* a *correction* -- HOW to estimate: plain, control variates at the mode,
  SVRG anchors.

Per step, ``estimate(rngs, theta, state) -> (grad, state, n_grad_evals)``
returns ``g ≈ ∇U(theta)`` (prior included) for all chains ``theta (C, p)``.
"""

from dataclasses import dataclass

import numpy as np

from ..models import as_float64
from ..utils import ParamsMixin

__all__ = ["BaseStrategy", "GradientEstimator", "Problem"]


@dataclass(frozen=True, eq=False)
class Problem:
    """Everything a strategy may use: model, prior, data and the mode.

    ``weight`` (optional, ``(n_rows,)``) are multiplicities (compression);
    ``n_data`` is their sum (the N of the papers).  ``mode`` is the posterior
    mode ``theta_hat`` ``(p,)`` and ``covariance`` its Laplace covariance
    (dense ``(p, p)``, diagonal ``(p,)`` or None).
    """

    model: object
    prior: object
    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray = None
    mode: np.ndarray = None
    covariance: np.ndarray = None

    @property
    def n_rows(self):
        return self.X.shape[0]

    @property
    def n_data(self):
        return float(self.n_rows if self.weight is None else self.weight.sum())

    def rows_weight(self, idx):
        """Data multiplicities of the rows ``idx`` (None when unweighted)."""
        return None if self.weight is None else self.weight[idx]

    def full_grad(self, theta, chunk=8192):
        """Exact ``∇U`` for rows of ``theta`` ``(C, p)``, in row chunks."""
        g = self.prior.grad(theta)
        for start in range(0, self.n_rows, chunk):
            sl = slice(start, start + chunk)
            w = None if self.weight is None else self.weight[sl]
            g = g + self.model.grad_sum(theta, as_float64(self.X[sl]), self.y[sl], w)
        return g

    def potential(self, theta, chunk=8192):
        """Exact ``U`` for rows of ``theta`` ``(C, p)`` -> ``(C,)``."""
        u = self.prior.value(theta)
        for start in range(0, self.n_rows, chunk):
            sl = slice(start, start + chunk)
            f = self.model.nll(theta, as_float64(self.X[sl]), self.y[sl])
            u = u + (f.sum(axis=1) if self.weight is None else f @ self.weight[sl])
        return u


class GradientEstimator:
    """Base of the per-fit gradient estimators.

    Attributes
    ----------
    n_data : float
        N (sum of multiplicities).
    exact : bool
        True when ``estimate`` returns the exact ``∇U`` (then ``potential``
        is available, as HMC needs).
    evals_per_step : float
        Nominal per-example gradient evaluations per step and chain.
    info : dict
        What the preprocessing produced, stored in the fitted estimator's
        ``preprocessing_`` dict.
    attributes : dict
        Outputs that become fitted attributes: key ``"compression_ratio"``
        becomes ``estimator.compression_ratio_``.
    preprocessing_evals : int
        Per-example gradient evaluations spent in ``build``.
    warnings : list of str
        Messages ``fit`` emits as :class:`~skbayes_sg.utils.ApproximationWarning`
        (a strategy whose target is measurably off the exact posterior).
    """

    exact = False
    potential = None

    def __init__(self, problem, *, info=None, attributes=None, preprocessing_evals=0):
        self.problem = problem
        self.n_data = problem.n_data
        self.info = {} if info is None else info
        self.attributes = {} if attributes is None else attributes
        self.preprocessing_evals = preprocessing_evals
        self.warnings = []

    def bind(self, step_size, sampler, precond):
        """Learn the dynamics once the step size is fixed (EWSG needs them).

        Called by the estimator layer after ``step_size="auto"`` is resolved
        (the pilot that measures the gradient noise runs before it).  No-op
        by default.
        """

    def init(self, rngs, theta):
        """Initial estimator state for chains ``theta (C, p)``."""
        return None

    def estimate(self, rngs, theta, state):
        """``(grad (C, p), state, n_grad_evals)``."""
        raise NotImplementedError


class BaseStrategy(ParamsMixin):
    """Base class of the subsampling strategies (hyperparameter holders).

    ``name`` is the string shortcut; ``needs_mode`` says whether ``build``
    uses ``problem.mode``; ``exact`` whether it gives the exact gradient (the
    only kind HMC accepts).
    """

    name = None
    needs_mode = False
    exact = False

    def build(self, problem, *, batch_size, rng):
        """Preprocess once and return a :class:`GradientEstimator`."""
        raise NotImplementedError

    def max_batch_size(self, n_rows):
        """Largest minibatch ``batch_size="auto"`` may give this strategy (default ``n_rows``)."""
        return n_rows

    def check_sampler(self, sampler):
        """Raise a ValueError if this strategy cannot work with ``sampler``."""
