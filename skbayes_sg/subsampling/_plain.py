"""Plain minibatch gradients (``uniform``) and the exact gradient (``full``)."""

from ._base import BaseStrategy, GradientEstimator
from ._index import UniformIndex

__all__ = ["Full", "Uniform", "PlainEstimator", "FullEstimator"]


class PlainEstimator(GradientEstimator):
    """``g = ∇f_0 + scale * sum_{i in B} w_i ∇f_i`` for any index sampler."""

    def __init__(self, problem, index, **kwargs):
        super().__init__(problem, **kwargs)
        self.index = index
        self.evals_per_step = float(index.b)

    def init(self, rngs, theta):
        return self.index.init(rngs, theta.shape[0])

    def estimate(self, rngs, theta, state):
        pb = self.problem
        idx, w, scale, state = self.index.draw(rngs, state)
        if pb.weight is not None:
            w = pb.weight[idx] if w is None else w * pb.weight[idx]
        g = pb.model.grad_sum(theta, pb.X[idx], pb.y[idx], w)
        g *= scale
        g += pb.prior.grad(theta)
        return g, state, idx.size


class FullEstimator(GradientEstimator):
    """The exact gradient ``∇U`` (and potential ``U``, for HMC)."""

    exact = True

    def __init__(self, problem, **kwargs):
        super().__init__(problem, **kwargs)
        self.evals_per_step = float(problem.n_rows)
        self.potential = problem.potential

    def estimate(self, rngs, theta, state):
        return self.problem.full_grad(theta), state, theta.shape[0] * self.problem.n_rows


class Uniform(BaseStrategy):
    """Uniform minibatches without replacement.

    Notes
    -----
    ``g = ∇f_0(theta) + (N / b) sum_{i in B} ∇f_i(theta)`` with ``B`` a
    uniform ``b``-subset (methods.md §1).  Unbiased; its variance grows like
    ``N^2 / b``, which is why the default strategy for the GLMs is
    :class:`ControlVariates`.

    References
    ----------
    Welling, M. and Teh, Y. W. (2011). Bayesian learning via stochastic
    gradient Langevin dynamics. ICML.
    """

    name = "uniform"

    def __init__(self):
        pass

    def build(self, problem, *, batch_size, rng):
        return PlainEstimator(problem, UniformIndex(problem.n_rows, batch_size))


class Full(BaseStrategy):
    """No subsampling: the exact full-data gradient every step.

    Notes
    -----
    ``g = ∇U(theta)`` (methods.md §2).  Costs ``N`` gradient evaluations per
    step; for small data, reference runs and ``sampler="hmc"``.
    """

    name = "full"
    exact = True

    def __init__(self):
        pass

    def build(self, problem, *, batch_size, rng):
        return FullEstimator(problem)
