"""Samplers: hyperparameter objects that build pure, data-blind kernels.

Use a string (``sampler="sghmc"``) or an object (``SGHMC(friction=0.5)``).
Diffusions: overdamped (SGLD, PSGLD), underdamped (SGHMC, whose integrators are in
:data:`INTEGRATORS`), thermostat (SGNHT);
HMC is Metropolis-corrected.  :func:`run_chains` is the one sampling loop.
"""

from types import MappingProxyType

from ._base import BaseSampler, Kernel
from ._ewsg import ewsg_energy, metropolis_pick
from ._hmc import HMC
from ._integrators import INTEGRATORS, ABOBAIntegrator, EulerIntegrator
from ._overdamped import PSGLD, SGLD
from ._precond import Preconditioner, dense, diagonal, from_laplace, identity, lowrank
from ._run import Trace, run_chains
from ._thermostat import SGNHT
from ._underdamped import SGHMC

SAMPLERS = MappingProxyType({"sgld": SGLD, "psgld": PSGLD, "sghmc": SGHMC, "sgnht": SGNHT,
                             "hmc": HMC})

__all__ = [
    "ABOBAIntegrator", "BaseSampler", "EulerIntegrator", "HMC", "INTEGRATORS", "Kernel", "PSGLD",
    "Preconditioner", "SAMPLERS", "SGHMC", "SGLD", "SGNHT", "Trace", "dense", "diagonal",
    "ewsg_energy", "from_laplace", "identity", "lowrank", "metropolis_pick", "run_chains",
]
