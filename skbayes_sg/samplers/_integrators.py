"""The registry of SGHMC's integrators (``SGHMC(integrator=...)``), as BlackJAX passes
``integrator=`` to its kernels.

An integrator is an immutable object that owns everything that depends on the discretisation:

* ``gradient(estimator, h, precond, diffusion, energy)`` -- the kernel's
  :class:`~._ewsg.GradientSource` (plain, or EWSG's pick with the sampler's ``index_energy``
  where the integrator couples the index);
* ``kernel(source, h, precond, friction, diffusion, *, keep, thermostat, dtype)`` -- the
  :class:`~._base.Kernel`;
* ``stationary_variance(h, lam, nu, friction)`` -- the closed form on ``U = lam u^2 / 2`` with
  gradient noise ``nu`` (``step_size="auto"``);
* ``max_step`` -- cap of the automatic whitened step;
* ``subtractable_noise(h, friction)`` and ``subtraction_cap(top, friction)`` -- the room for a
  ``noise_correction`` and the largest step that leaves it;
* ``couples_index`` -- whether EWSG's candidate gradients can be picked with its kernel.
"""

from types import MappingProxyType

from ._aboba import ABOBAIntegrator
from ._euler import EulerIntegrator

__all__ = ["INTEGRATORS", "ABOBAIntegrator", "EulerIntegrator"]

INTEGRATORS = MappingProxyType({i.name: i for i in (EulerIntegrator(), ABOBAIntegrator())})
