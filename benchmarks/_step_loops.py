"""The hand-written loops bench_step.py races the library against: careful numpy and BlackJAX.

Each runner returns its own wall seconds (``numpy_*``) or a closure that does (``blackjax_runner``,
compiled before it is returned), so that setup never enters a timing.
"""

import time

import numpy as np
from scipy.special import expit, softmax

B, BLOCK = 100, 256  # minibatch rows; steps whose indices and noise are drawn at once


def numpy_glm(X, y, K, h, n_steps, n_chains=1, seed=0):
    """SGLD for binary (K = 2) or softmax logistic regression; chains share each minibatch.

    Prior N(0, 1) on weights, N(0, 10^2) on intercepts.  State ``(C, R, d + 1)`` in X's dtype,
    updated in place; indices and noise drawn ``BLOCK`` steps at a time.
    """
    rng, (N, d), R = np.random.default_rng(seed), X.shape, 1 if K == 2 else K
    dt, half, scale = X.dtype, 0.5 * h, X.shape[0] / B
    T = (y[:, None] == np.arange(R)).astype(dt) if R > 1 else y.astype(dt)[:, None]
    theta = np.zeros((n_chains, R, d + 1), dtype=dt)
    W, c = theta[..., :d], theta[..., d]
    prec = np.r_[np.ones(d), 0.01].astype(dt)
    decay, kick = 1.0 - half * prec, dt.type(-half * scale)
    grad = np.empty_like(theta)
    gW, gc = grad[..., :d], grad[..., d]
    start = time.perf_counter()
    for s0 in range(0, n_steps, BLOCK):
        nb = min(BLOCK, n_steps - s0)
        idx = rng.integers(0, N, size=(nb, B))
        noise = rng.standard_normal((nb, n_chains, R, d + 1), dtype=dt)
        noise *= dt.type(np.sqrt(h))
        for k in range(nb):
            Xb, Tb = X.take(idx[k], axis=0), T.take(idx[k], axis=0)
            z = np.matmul(W, Xb.T)  # (C, R, B)
            z += c[..., None]
            if R == 1:
                expit(z, out=z)
            else:
                z = softmax(z, axis=1)
            z -= Tb.T
            np.matmul(z, Xb, out=gW)
            z.sum(axis=-1, out=gc)
            theta *= decay
            grad *= kick
            theta += grad
            theta += noise[k]
    return time.perf_counter() - start


def numpy_mlp(X, y, h, n_steps, hidden=100, seed=0):
    """SGLD for a 784-100-10 ReLU MLP, prior N(0, 1), parameters in X's dtype updated in place."""
    rng, (N, d), K = np.random.default_rng(seed), X.shape, int(y.max()) + 1
    dt, half, scale = X.dtype, 0.5 * h, X.shape[0] / B
    sizes = [(d, hidden), (hidden,), (hidden, K), (K,)]
    ends = np.cumsum([int(np.prod(s)) for s in sizes])

    def split(flat):
        return [part.reshape(s) for part, s in zip(np.split(flat, ends[:-1]), sizes)]

    flat, grad = np.zeros(ends[-1], dtype=dt), np.empty(ends[-1], dtype=dt)
    flat[:d * hidden] = 0.05 * rng.standard_normal(d * hidden)
    (W1, b1, W2, b2), g = split(flat), split(grad)
    onehot, decay, kick = np.eye(K, dtype=dt), dt.type(1.0 - half), dt.type(-half * scale)
    block = 8
    start = time.perf_counter()
    for s0 in range(0, n_steps, block):
        nb = min(block, n_steps - s0)
        idx = rng.integers(0, N, size=(nb, B))
        noise = rng.standard_normal((nb, flat.size), dtype=dt)
        noise *= dt.type(np.sqrt(h))
        for k in range(nb):
            Xb = X.take(idx[k], axis=0)
            H = Xb @ W1
            H += b1
            np.maximum(H, 0, out=H)
            P = softmax(H @ W2 + b2, axis=1)
            P -= onehot.take(y.take(idx[k]), axis=0)
            np.matmul(H.T, P, out=g[2])
            P.sum(axis=0, out=g[3])
            dH = P @ W2.T
            dH *= H > 0
            np.matmul(Xb.T, dH, out=g[0])
            dH.sum(axis=0, out=g[1])
            flat *= decay
            grad *= kick
            flat += grad
            flat += noise[k]
    return time.perf_counter() - start


def blackjax_runner(X, y, K, h, n_steps, dtype, mlp=False):
    """Compiled ``run(key)`` of BlackJAX SGLD in ``lax.scan``; returns a timing closure."""
    import blackjax
    import jax
    import jax.numpy as jnp
    from blackjax.sgmcmc.gradients import grad_estimator

    Xj, N = jnp.asarray(X, dtype=dtype), X.shape[0]
    yj = jnp.asarray(y, dtype=dtype) if K == 2 else jnp.asarray(y, dtype=jnp.int32)
    if mlp:
        d, hid = X.shape[1], 100
        init = {"W1": 0.05 * jnp.ones((d, hid), dtype), "b1": jnp.zeros(hid, dtype),
                "W2": jnp.zeros((hid, K), dtype), "b2": jnp.zeros(K, dtype)}

        def logits(p, x):
            return jnp.maximum(x @ p["W1"] + p["b1"], 0) @ p["W2"] + p["b2"]
    else:
        R = 1 if K == 2 else K
        init = {"W": jnp.zeros((X.shape[1], R), dtype), "b": jnp.zeros(R, dtype)}

        def logits(p, x):
            return x @ p["W"] + p["b"]

    def logprior(p):
        return -0.5 * sum(jnp.sum(v ** 2) for v in jax.tree_util.tree_leaves(p))

    def loglik(p, row):
        x, t = row
        z = logits(p, x)
        if z.shape[-1] == 1:
            return t * z[0] - jnp.logaddexp(0.0, z[0])
        return z[t] - jax.nn.logsumexp(z)

    sgld = blackjax.sgld(grad_estimator(logprior, loglik, N))
    x64 = np.dtype(dtype) == np.float64
    with jax.enable_x64(x64):
        Xj, init = jnp.asarray(Xj, dtype), jax.tree.map(lambda a: jnp.asarray(a, dtype), init)

    def one_step(pos, key):
        k_idx, k_step = jax.random.split(key)
        idx = jax.random.randint(k_idx, (B,), 0, N)
        return sgld.step(k_step, pos, (Xj[idx], yj[idx]), jnp.asarray(h, dtype)), None

    @jax.jit
    def run(key):
        return jax.lax.scan(one_step, init, jax.random.split(key, n_steps))[0]

    with jax.enable_x64(x64):  # float32 runs without x64 (else BlackJAX's noise is float64)
        jax.block_until_ready(run(jax.random.PRNGKey(0)))  # compile

    def go():
        with jax.enable_x64(x64):
            t0 = time.perf_counter()
            jax.block_until_ready(run(jax.random.PRNGKey(1)))
            return time.perf_counter() - t0
    return go
