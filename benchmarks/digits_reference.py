"""Reference draws for ``softmax_digits`` (``results/calibration_multiclass.md``).

NumPyro NUTS on the Laplace-whitened potential ``theta = mode + L z`` (``L L^T`` the inverse
Hessian at the mode, diagonal mass adapted), on exactly ``_calib_problems.potential``.  The
dense-mass protocol of ``_references.py`` does not converge on this posterior (tree depth 10 on
every draw, R-hat 1.74); any fixed affine map is an exact reparametrisation, so NUTS stays exact
while the Laplace makes it efficient.  Writes the class-centred quantity draws
``(chains, draws, 650)`` and an info JSON to ``--out``, as ``_references`` caches them.

    python benchmarks/digits_reference.py [--quick] [--out PATH.npz] [--json PATH]

About 3 minutes on one core (``--quick``: a few seconds on 200 rows, short chains).
"""

import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from _calib_problems import make_problems, potential, quantities, to_named
from _common import cli, jax_versions, write_json

FULL = {"chains": 4, "warmup": 500, "draws": 1000, "max_tree_depth": 8}
QUICK = {"chains": 2, "warmup": 20, "draws": 20, "max_tree_depth": 4}


def whitened_nuts(problem, settings, seed=0):
    """``(theta (C, D, p), info)``: NUTS on ``z`` with ``theta = mode + L z``."""
    import jax
    import jax.numpy as jnp
    import scipy.optimize as so
    from numpyro.infer import MCMC, NUTS

    U, dim = potential(problem, jnp)
    grad = jax.jit(jax.grad(U))
    mode = so.minimize(lambda t: float(U(t)), np.zeros(dim), jac=lambda t: np.asarray(grad(t)),
                       method="L-BFGS-B", options={"maxiter": 10000, "gtol": 1e-9}).x
    H = np.asarray(jax.jit(jax.hessian(U))(mode))
    L = np.linalg.cholesky(np.linalg.inv(H))
    Lj, mj = jnp.asarray(L), jnp.asarray(mode)
    C, W, D = settings["chains"], settings["warmup"], settings["draws"]
    mcmc = MCMC(NUTS(potential_fn=lambda z: U(mj + Lj @ z),
                     max_tree_depth=settings["max_tree_depth"]),
                num_warmup=W, num_samples=D, num_chains=C, chain_method="sequential",
                progress_bar=False)
    init = np.random.default_rng(seed).normal(scale=0.5, size=(C, dim))
    t0 = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), init_params=init, extra_fields=("diverging", "num_steps"))
    z = np.asarray(mcmc.get_samples(group_by_chain=True))
    extra = mcmc.get_extra_fields()
    info = {"seconds": time.perf_counter() - t0, "settings": settings,
            "divergences": int(np.sum(np.asarray(extra["diverging"]))),
            "mean_leapfrog": float(np.mean(np.asarray(extra["num_steps"]))),
            "lbfgs_grad_norm": float(np.abs(grad(mode)).max())}
    return mode + z @ L.T, info


def main():
    args = cli(__doc__, out={"default": None, "help": "where the .npz draws go"})
    if jax_versions(("numpyro",), "[digits-reference] jax/numpyro needed ({exc}): pip install "
                    "'skbayes_sg[bench]'") is None:
        write_json(args.json, {"skipped": "jax/numpyro not importable"})
        return
    problem = next(q for q in make_problems() if q.name == "softmax_digits")
    if args.quick:
        problem = replace(problem, X=problem.X[:200], y=problem.y[:200])
    theta, info = whitened_nuts(problem, QUICK if args.quick else FULL)
    C, D, dim = theta.shape
    q = quantities(to_named(problem, theta.reshape(-1, dim)), True)[0].reshape(C, D, -1)
    out = Path(args.out or (tempfile.mkdtemp() + "/digits.npz" if args.quick else
                            "~/.cache/skbayes_sg/calibration/softmax_digits_whitened.npz"))
    out = out.expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, draws=q, info=json.dumps(info))
    write_json(args.json, {**info, "out": str(out), "shape": list(q.shape)})
    print(info)


if __name__ == "__main__":
    main()
