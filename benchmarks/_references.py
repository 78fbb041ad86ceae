"""Reference posteriors of ``calibration.py``: closed form, or NumPyro NUTS cached as ``.npz``.

A :class:`Reference` holds, per compared quantity, the reference mean and sd and their own
Monte-Carlo errors (zero for a closed form): the mean's standard error ``sd / sqrt(ESS)`` and the
relative error of the sd, from the ESS of the squared deviations.  NUTS runs on exactly the
library's potential (``_calib_problems.potential``), after :func:`check_potential` has compared
that potential with the one the fitted estimator itself uses (``model_.nll`` + ``prior_.value``).
"""

import hashlib
import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from _calib_large import softmax_hessian
from _calib_problems import make_estimator, potential, prior, quantities, targets, to_named
from _common import jax_versions
from skbayes_sg.diagnostics import effective_sample_size, split_rhat

__all__ = ["Reference", "check_potential", "get_reference", "nuts_available"]

_VERSION = "calibration-ref-1"  # bump when the potential or the NUTS protocol changes


@dataclass
class Reference:
    """Reference mean and sd per quantity, with the reference's own Monte-Carlo errors."""

    labels: list
    mean: np.ndarray
    sd: np.ndarray
    mean_se: np.ndarray  # Monte-Carlo standard error of ``mean`` (0 for a closed form)
    sd_rse: np.ndarray  # relative Monte-Carlo error of ``sd`` (0 for a closed form)
    source: str
    info: dict = field(default_factory=dict)


def nuts_available():
    """numpyro version, or None (with a message) when jax / numpyro cannot be imported."""
    versions = jax_versions(("numpyro",), "[references] jax/numpyro not importable ({exc}): NUTS "
                            "references skipped (pip install 'skbayes_sg[bench]')")
    return versions and versions["numpyro"]


def _library_fit(problem):
    """A short fit: its ``model_``, ``prior_`` and ``mode_`` are what the library samples."""
    est = make_estimator(problem, n_warmup=20, n_draws=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(problem.X, problem.y)


def check_potential(problem, U, est, y_enc, n_points=5, seed=0):
    """Max relative disagreement of ``U`` differences with the library's potential.

    Compares ``U(theta_k) - U(mode)`` with the same difference of ``model_.nll`` + ``prior_``
    at ``n_points`` points around the library's mode (additive constants cancel).
    """
    rng = np.random.default_rng(seed)
    pts = est.mode_ + 0.3 * rng.normal(size=(n_points + 1, est.mode_.size))
    pts[0] = est.mode_
    lib = est.model_.nll(pts, problem.X, y_enc).sum(axis=1) + est.prior_.value(pts)
    ours = np.array([float(U(p)) for p in pts])
    d_lib, d_ours = lib[1:] - lib[0], ours[1:] - ours[0]
    return float(np.max(np.abs(d_lib - d_ours) / (1.0 + np.abs(d_lib))))


def _from_draws(draws, labels, source, info):
    """Reference statistics of quantity draws ``(chains, n, q)``."""
    flat = draws.reshape(-1, draws.shape[-1])
    mean, sd = flat.mean(0), flat.std(0)
    ess_mean = effective_sample_size(draws, method="basic")
    dev2 = (draws - mean) ** 2
    ess_var = effective_sample_size(dev2, method="basic")
    var_se = dev2.reshape(-1, dev2.shape[-1]).std(0) / np.sqrt(ess_var)
    info = {**info, "max_rhat": float(np.max(split_rhat(draws))),
            "min_ess": float(np.min(ess_mean))}
    return Reference(labels, mean, sd, sd / np.sqrt(ess_mean), 0.5 * var_se / sd**2, source, info)


def _exact(problem):
    """Closed-form Gaussian posterior of the known-noise regressor, mapped to y's units."""
    y_enc, _, y_scale = targets(problem)
    X1 = np.c_[problem.X, np.ones(len(problem.X))]
    s = problem.params["noise_std"] / y_scale
    cov = np.linalg.inv(X1.T @ X1 / s**2 + np.diag(prior(problem, y_enc)[0]))
    mu = cov @ X1.T @ y_enc / s**2
    mean, labels = quantities(to_named(problem, mu[None]))
    sd = np.sqrt(np.diag(cov)) * y_scale
    zero = np.zeros_like(sd)
    return Reference(labels, mean[0], sd, zero, zero, "exact (closed form)", {})


def _nuts(problem, U, p, init, *, chains, warmup, draws, seed):
    import jax
    from numpyro.infer import MCMC, NUTS

    mcmc = MCMC(NUTS(potential_fn=U, dense_mass=True), num_warmup=warmup, num_samples=draws,
                num_chains=chains, chain_method="sequential", progress_bar=False)
    jitter = np.random.default_rng(seed).normal(scale=0.1, size=(chains, p))
    t0 = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), init_params=init + jitter,
             extra_fields=("diverging", "num_steps"))
    theta = np.asarray(mcmc.get_samples(group_by_chain=True))
    extra = mcmc.get_extra_fields()
    return theta, {"seconds": time.perf_counter() - t0,
                   "divergences": int(np.sum(np.asarray(extra["diverging"]))),
                   "mean_leapfrog": float(np.mean(np.asarray(extra["num_steps"])))}


def whitened_nuts(problem, U, p, init, *, chains, warmup, draws, seed, max_tree_depth=8,
                  closed_hessian=False, trajectory=None):
    """NUTS on ``z`` with ``theta = mode + L z``, ``L L^T`` the inverse Hessian at the mode.

    Any fixed affine map is an exact reparametrisation, so NUTS stays exact while the Laplace
    makes it efficient where the dense-mass protocol does not converge (digits' softmax: tree
    depth 10 on every draw, R-hat 1.74).  ``init`` is unused: the chains start at ``z ~ N(0,
    0.25 I)``.  ``closed_hessian``: the softmax Hessian in closed form
    (:func:`_calib_large.softmax_hessian`), where JAX's ``hessian`` would hold ``p`` reverse
    passes at once (10,000 parameters on 20,000 rows: tens of GB).  ``trajectory``: Metropolis
    HMC of that fixed length instead of NUTS (``pi / 2`` gives independent draws on the
    whitened Gaussian, in about a third of NUTS's leapfrogs), with the Laplace covariance as its
    fixed inverse mass matrix instead of the map (the same sampler; a ``p x p`` constant in the
    potential took XLA minutes to compile).  Returns ``(theta (chains, draws, p), info)``.
    """
    import jax
    from numpyro.infer import MCMC

    t_laplace = time.perf_counter()
    mode, cov, grad_norm = _laplace(problem, U, p, closed_hessian)
    L = np.linalg.cholesky(cov)
    z0 = np.random.default_rng(seed).normal(scale=0.5, size=(chains, p))
    kernel, init = _kernel(U, mode, cov, L, z0, trajectory, max_tree_depth)
    del cov
    mcmc = MCMC(kernel, num_warmup=warmup, num_samples=draws, num_chains=chains,
                chain_method="sequential", progress_bar=bool(trajectory))  # minutes a chain
    t0 = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), init_params=init, extra_fields=("diverging", "num_steps"))
    z = np.asarray(mcmc.get_samples(group_by_chain=True))
    extra = mcmc.get_extra_fields()
    theta = z if trajectory else mode + z @ L.T
    return theta, {"seconds": time.perf_counter() - t0,
                   "divergences": int(np.sum(np.asarray(extra["diverging"]))),
                   "mean_leapfrog": float(np.mean(np.asarray(extra["num_steps"]))),
                   "lbfgs_grad_norm": grad_norm, "laplace_seconds": t0 - t_laplace}


def _laplace(problem, U, p, closed_hessian):
    """``(mode, covariance, max |gradient| at the mode)``: L-BFGS on ``U`` and the inverse of its
    Hessian there (JAX's, or :func:`_calib_large.softmax_hessian`)."""
    import jax
    import scipy.optimize as so

    grad, value = jax.jit(jax.grad(U)), jax.jit(U)
    mode = so.minimize(lambda t: float(value(t)), np.zeros(p), jac=lambda t: np.asarray(grad(t)),
                       method="L-BFGS-B", options={"maxiter": 10000, "gtol": 1e-9}).x
    H = (softmax_hessian(problem, mode) if closed_hessian
         else np.asarray(jax.jit(jax.hessian(U))(mode)))
    return mode, np.linalg.inv(H), float(np.abs(grad(mode)).max())


def _kernel(U, mode, cov, L, z0, trajectory, max_tree_depth):
    """``(kernel, initial positions)``: NUTS on the whitened potential from ``z0``, or HMC of
    length ``trajectory`` with ``cov`` as its fixed inverse mass matrix from ``mode + L z0``."""
    import jax.numpy as jnp
    from numpyro.infer import HMC, NUTS

    if trajectory:
        return HMC(potential_fn=U, trajectory_length=trajectory, dense_mass=True,
                   inverse_mass_matrix=cov, adapt_mass_matrix=False), mode + z0 @ L.T
    Lj, mj = jnp.asarray(L), jnp.asarray(mode)
    return NUTS(potential_fn=lambda z: U(mj + Lj @ z), max_tree_depth=max_tree_depth), z0


#: ``Problem.reference`` -> (NUTS run, its settings given the requested ones, its label)
SAMPLERS = {
    "nuts": (_nuts, lambda s: s, "NUTS {chains} x {draws} (dense mass)"),
    # its draws are nearly independent: half the warm-up, a fifth of the draws (the tree depth
    # in the settings also keeps its cache key apart from a dense-mass run's)
    "whitened_nuts": (whitened_nuts,
                      lambda s: {**s, "warmup": s["warmup"] // 2, "draws": s["draws"] // 5,
                                 "max_tree_depth": 8},
                      "NUTS {chains} x {draws} on the Laplace-whitened potential"),
    # 10,000 parameters: a leapfrog costs ~70 ms on 2 cores, so HMC of length pi / 2 in the
    # Laplace metric, a fifth of the warm-up and a twentieth of the draws (4 x 250: an ESS near
    # 1,000 on a nearly Gaussian whitened target)
    "whitened_hmc_large": (whitened_nuts,
                           lambda s: {**s, "warmup": s["warmup"] // 5, "draws": s["draws"] // 20,
                                      "closed_hessian": True, "trajectory": float(np.pi / 2)},
                           "HMC {chains} x {draws} (length pi/2) in the Laplace metric"),
    # mnist: a leapfrog on 60,000 rows costs about twice the above, so 4 x 150 after 150
    "whitened_hmc_mnist": (whitened_nuts,
                           lambda s: {**s, "warmup": 150, "draws": 150,
                                      "closed_hessian": True, "trajectory": float(np.pi / 2)},
                           "HMC {chains} x {draws} (length pi/2) in the Laplace metric"),
}


def _key(problem, settings):
    h = hashlib.sha1(json.dumps([_VERSION, problem.name, problem.kind, problem.params,
                                 problem.y_scaling, settings], sort_keys=True).encode())
    h.update(np.ascontiguousarray(problem.X).tobytes())
    h.update(np.ascontiguousarray(problem.y).tobytes())
    return f"{problem.name}-{h.hexdigest()[:12]}.npz"


def get_reference(problem, cache_dir, *, chains=4, warmup=1000, draws=5000):
    """The problem's :class:`Reference` (closed form, or NUTS cached under ``cache_dir``)."""
    est = _library_fit(problem)
    if problem.kind == "linear":  # normalize_y as the estimator did it
        problem.y_scaling = (est.y_mean_, est.y_scale_)
    y_enc = targets(problem)[0]
    U, p = potential(problem)
    err = check_potential(problem, U, est, y_enc)
    if err > 1e-8:
        raise RuntimeError(f"{problem.name}: the reference potential differs from the library's "
                           f"(relative {err:.2g}); fix _calib_problems.potential")
    if problem.reference == "exact":
        return _exact(problem)
    run, settings_of, label = SAMPLERS[problem.reference]
    settings = settings_of({"chains": chains, "warmup": warmup, "draws": draws})
    path = Path(cache_dir).expanduser() / _key(problem, settings)
    centre = problem.rows > 1
    if path.exists():
        with np.load(path, allow_pickle=False) as f:
            q, info = f["draws"], json.loads(str(f["info"]))
        print(f"[references] {problem.name}: NUTS draws from {path}", flush=True)
    else:
        import jax.numpy as jnp

        Uj, _ = potential(problem, jnp)
        print(f"[references] {problem.name}: running {problem.reference} ({settings})",
              flush=True)
        theta, info = run(problem, Uj, p, est.mode_, seed=0, **settings)
        named = to_named(problem, theta.reshape(-1, p))
        q = quantities(named, centre)[0].reshape(settings["chains"], settings["draws"], -1)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, draws=q, info=json.dumps(info))
        print(f"[references] {problem.name}: {info['seconds']:.0f} s, cached at {path}",
              flush=True)
    labels = quantities(to_named(problem, np.zeros((1, p))), centre)[1]
    return _from_draws(q, labels, label.format(**settings), {**info, "potential_check": err})
