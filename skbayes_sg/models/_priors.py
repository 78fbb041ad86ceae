"""The priors: independent Gaussians on the parameters, and on a log noise scale."""

from dataclasses import dataclass

import numpy as np

__all__ = ["GaussianPrior", "NoisePrior"]


@dataclass(frozen=True, eq=False)
class GaussianPrior:
    """Zero-mean Gaussian prior with diagonal precision.

    ``f_0(theta) = sum_j precision_j theta_j^2 / 2``.
    """

    precision: np.ndarray

    def value(self, theta):
        """Prior potential ``f_0`` per row of ``theta`` ``(C, p)`` -> ``(C,)``."""
        return 0.5 * np.einsum("cp,cp,p->c", theta, theta, self.precision)

    def grad(self, theta):
        """Gradient of ``f_0``: ``precision * theta``."""
        return theta * self.precision

    def hessian_diag(self, theta1):
        """Diagonal of ``∇²f_0`` at one position ``(p,)``."""
        return self.precision


@dataclass(frozen=True, eq=False)
class NoisePrior(GaussianPrior):
    """Gaussian prior on the weights, ``sigma^2 ~ InvGamma(a, b)`` on the noise.

    The noise enters theta as ``theta_k = log sigma`` (``precision_k`` should be 0).  In that
    coordinate, with the Jacobian, ``f_0 += 2 a theta_k + b exp(-2 theta_k)``: like ``2a``
    pseudo-observations with residual variance ``b / a``.  It keeps sigma away from 0, so a target
    that X fits exactly still has a proper posterior without a funnel.
    """

    index: int = -1
    a: float = 1.0
    b: float = 1.0

    def value(self, theta):
        t = theta[:, self.index]
        return super().value(theta) + 2.0 * self.a * t + self.b * np.exp(-2.0 * t)

    def grad(self, theta):
        g = super().grad(theta)
        g[:, self.index] += 2.0 * self.a - 2.0 * self.b * np.exp(-2.0 * theta[:, self.index])
        return g

    def hessian_diag(self, theta1):
        h = np.array(self.precision, dtype=float)
        h[self.index] += 4.0 * self.b * np.exp(-2.0 * theta1[self.index])
        return h
