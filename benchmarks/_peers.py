"""JAX peers for bench_peers.py: NumPyro NUTS reference and BlackJAX SGLD / SGLD-CV.

Every function imports jax lazily; ``available()`` says whether the peers can run.
Parameters are in the library's order ``theta = [coef (d,), intercept]`` with the
library's prior: N(0, prior_scale^2) on the weights and N(0, (10 prior_scale)^2)
on the intercept (``skbayes_sg/models/_logistic.py``, ``prior_precision``).
"""

import time

import numpy as np

from _common import jax_versions


def available():
    """Versions of jax / numpyro / blackjax, or None (with a printed message) when missing."""
    return jax_versions(("numpyro", "blackjax"), "[peers] jax/numpyro/blackjax not importable "
                        "({exc}); peers skipped, reference = long skbayes_sg hmc+full run")


def nuts_reference(X, y, prior_scale, *, chains, warmup, draws, seed=0):
    """NumPyro NUTS (dense mass matrix) draws ``(chains, draws, d + 1)``.

    Also returns wall seconds and data passes (leapfrog steps, warm-up included).
    """
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    Xj, yj = jnp.asarray(X), jnp.asarray(y, dtype=jnp.float64)

    def model():
        w = numpyro.sample("w", dist.Normal(0.0, prior_scale).expand([X.shape[1]]).to_event(1))
        b = numpyro.sample("b", dist.Normal(0.0, 10.0 * prior_scale))
        numpyro.sample("y", dist.Bernoulli(logits=Xj @ w + b), obs=yj)

    mcmc = MCMC(NUTS(model, dense_mass=True), num_warmup=warmup, num_samples=draws,
                num_chains=chains, chain_method="sequential", progress_bar=False)
    t0 = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), extra_fields=("num_steps",))
    s = mcmc.get_samples(group_by_chain=True)
    theta = np.concatenate([np.asarray(s["w"]), np.asarray(s["b"])[..., None]], axis=-1)
    seconds = time.perf_counter() - t0
    # num_steps is recorded for the kept draws only; warm-up is assumed to cost the same per step
    steps = float(np.sum(np.asarray(mcmc.get_extra_fields()["num_steps"])))
    return theta, seconds, steps * (warmup + draws) / draws


def blackjax_sgld(X, y, prior_scale, *, center, step_size, batch_size, n_warmup, n_draws,
                  n_chains, cv, seed=0):
    """BlackJAX SGLD (``cv=False``) or SGLD-CV centred at ``center`` (jit + lax.scan).

    Chains run one after another (like the library with ``n_jobs=1``), start at
    ``center``, draw minibatches with replacement (``jax.random.randint``).
    Returns kept draws ``(n_chains, n_draws, d + 1)``, sampling seconds
    (compiled), compile seconds.
    """
    import blackjax
    import jax
    import jax.numpy as jnp
    from blackjax.sgmcmc.gradients import control_variates, grad_estimator

    Xj, yj = jnp.asarray(X), jnp.asarray(y, dtype=jnp.float64)
    n, prec = X.shape[0], jnp.r_[jnp.full(X.shape[1], prior_scale ** -2.0),
                                 (10.0 * prior_scale) ** -2.0]

    def logprior(theta):
        return -0.5 * jnp.sum(prec * theta**2)

    def loglik(theta, row):
        x, t = row
        z = x @ theta[:-1] + theta[-1]
        return t * z - jnp.logaddexp(0.0, z)

    grad_fn = grad_estimator(logprior, loglik, n)
    if cv:
        grad_fn = control_variates(grad_fn, jnp.asarray(center), (Xj, yj))
    sgld = blackjax.sgld(grad_fn)
    n_steps = n_warmup + n_draws

    def one_step(pos, key):
        k_idx, k_step = jax.random.split(key)
        idx = jax.random.randint(k_idx, (batch_size,), 0, n)
        pos = sgld.step(k_step, pos, (Xj[idx], yj[idx]), step_size)
        return pos, pos

    @jax.jit
    def run(key):
        _, path = jax.lax.scan(one_step, jnp.asarray(center), jax.random.split(key, n_steps))
        return path[n_warmup:]

    t0 = time.perf_counter()
    run(jax.random.PRNGKey(seed)).block_until_ready()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = [np.asarray(run(jax.random.PRNGKey(seed + 1 + c)).block_until_ready())
           for c in range(n_chains)]
    return np.stack(out), time.perf_counter() - t0, compile_s
