"""Stochastic-gradient Nosé-Hoover thermostat (SGNHT): adaptive friction."""

import numpy as np

from ._base import POSITIVE
from ._underdamped import Underdamped

__all__ = ["SGNHT", "thermostat_update"]


def thermostat_update(z, r, h):
    """``z <- z + h (r.r / p - 1)`` per chain (``z`` ``(C, 1)``, ``r`` ``(C, p)``)."""
    return z + h * (np.einsum("cp,cp->c", r, r)[:, None] * (1.0 / r.shape[1]) - 1.0)


class SGNHT(Underdamped):
    """Stochastic-gradient Nosé-Hoover thermostat.

    Parameters
    ----------
    diffusion : float, default=1.0
        Injected diffusion ``A`` (whitened units; finite, > 0); the thermostat starts at ``A`` and
        adapts the friction to absorb unknown gradient noise.

    Notes
    -----
    SGHMC's momentum update with the friction replaced by the thermostat ``z`` (one per chain)::

        r     <- r - h z r - h L^T g + sqrt(2 A h) xi
        theta <- theta + h L r
        z     <- z + h (r.r / p - 1)

    Runs EWSG (``subsampling="ewsg"``) with ``c = z`` (current value) and ``D = A``.

    References
    ----------
    Ding, N., Fang, Y., Babbush, R., Chen, C., Skeel, R. D. and Neven, H.
    (2014). Bayesian sampling using stochastic gradient thermostats. NeurIPS.
    """

    name, coefficient = "sgnht", "diffusion"
    _parameter_constraints = {"diffusion": POSITIVE}
    thermostat = staticmethod(thermostat_update)

    def __init__(self, diffusion=1.0):
        self.diffusion = diffusion

    def stationary_variance(self, h, lam, nu):
        """Variance at the thermostat's fixed point (mean field: ``z`` held at ``z*``).

        For fixed friction ``z`` the scheme's stationary moments are, with
        ``x = h z``, ``q = 2 A h + h^2 nu`` and ``B = 2 - h^2 lam / 2``::

            E[r^2] = q / (x (B - x)),    lam E[theta^2] = E[r^2] (2 - x) / 2

        The thermostat drives ``E[r^2]`` to 1, i.e. ``x* = (B - sqrt(B^2 - 4q)) / 2``
        (the stable root), so ``lam E[theta^2] = 1 - x*/2``: SGNHT absorbs the
        gradient noise but under-disperses by ``x*/2``.  Without a real root
        the thermostat cannot cool the momenta and the chain diverges (inf).
        """
        h = np.asarray(h, dtype=float)
        q, B = 2.0 * self.diffusion * h + h * h * nu, 2.0 - 0.5 * h * h * lam
        disc = B * B - 4.0 * q
        ok = (B > 0.0) & (disc >= 0.0)
        v = np.where(ok, (1.0 - 0.25 * (B - np.sqrt(np.maximum(disc, 0.0)))) / lam, np.inf)
        return float(v) if v.ndim == 0 else v
