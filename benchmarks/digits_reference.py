"""Reference draws for ``softmax_digits`` (results/calibration_multiclass.md): NumPyro NUTS on the
Laplace-whitened potential ``theta = mode + L z`` (L L^T the inverse Hessian at the mode, diagonal
mass adapted), on exactly ``_calib_problems.potential``.  The dense-mass protocol of
``_references.py`` does not converge on this posterior (tree depth 10 on every draw).

Usage: ``python benchmarks/digits_reference.py OUT.npz`` (~3 min on one core); writes the
class-centred quantity draws ``(4, 1000, 650)`` and an info JSON, as ``_references`` caches them.
"""
import sys, json, time, numpy as np
sys.path.insert(0, "benchmarks")
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
from numpyro.infer import MCMC, NUTS
import scipy.optimize as so
from _calib_problems import make_problems, potential, quantities, to_named
p = [q for q in make_problems() if q.name == "softmax_digits"][0]
U, dim = potential(p, jnp)
g = jax.jit(jax.grad(U))
res = so.minimize(lambda t: float(U(t)), np.zeros(dim), jac=lambda t: np.asarray(g(t)), method="L-BFGS-B",
                  options={"maxiter": 10000, "gtol": 1e-9})
mode = res.x
H = np.asarray(jax.jit(jax.hessian(U))(mode))
L = jnp.asarray(np.linalg.cholesky(np.linalg.inv(H)))
Uz = lambda z: U(jnp.asarray(mode) + L @ z)
C, W, D = 4, 500, 1000
mcmc = MCMC(NUTS(potential_fn=Uz, max_tree_depth=8), num_warmup=W, num_samples=D, num_chains=C,
            chain_method="sequential", progress_bar=False)
init = np.random.default_rng(0).normal(scale=0.5, size=(C, dim))
t0 = time.perf_counter()
mcmc.run(jax.random.PRNGKey(0), init_params=init, extra_fields=("diverging", "num_steps"))
z = np.asarray(mcmc.get_samples(group_by_chain=True))
theta = mode + z @ np.asarray(L).T
extra = mcmc.get_extra_fields()
info = {"seconds": time.perf_counter() - t0, "divergences": int(np.sum(np.asarray(extra["diverging"]))),
        "mean_leapfrog": float(np.mean(np.asarray(extra["num_steps"]))), "lbfgs_grad_norm": float(np.abs(g(mode)).max())}
q = quantities(to_named(p, theta.reshape(-1, dim)), True)[0].reshape(C, D, -1)
np.savez(sys.argv[1], draws=q, info=json.dumps(info))
print(info)
