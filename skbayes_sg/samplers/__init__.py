"""Samplers: hyperparameter objects that build pure, data-blind kernels.

Use a string (``sampler="sghmc"``) or an object (``SGHMC(friction=0.5)``).
"""

from ._base import BaseSampler, Kernel
from ._hmc import HMC
from ._precond import Preconditioner, dense, diagonal, identity
from ._psgld import PSGLD
from ._run import Trace, run_chains
from ._sghmc import SGHMC
from ._sgld import SGLD
from ._sgnht import SGNHT
from ._step_size import auto_batch_size, auto_step_size

SAMPLERS = {"sgld": SGLD, "psgld": PSGLD, "sghmc": SGHMC, "sgnht": SGNHT, "hmc": HMC}

__all__ = [
    "BaseSampler",
    "HMC",
    "Kernel",
    "PSGLD",
    "Preconditioner",
    "SAMPLERS",
    "SGHMC",
    "SGLD",
    "SGNHT",
    "Trace",
    "auto_batch_size",
    "auto_step_size",
    "dense",
    "diagonal",
    "identity",
    "run_chains",
]
