"""Synthetic logistic designs of bench_scale.py and bench_shared.py: float32 rows made in chunks.

``gaussian``: x ~ N(0, I); ``clustered``: ``K_CLUSTERS`` tight Gaussian clusters (within-cluster sd
``CLUSTER_SD``).  Labels follow a logistic model with the coefficients of :func:`truth`.
"""

import numpy as np

D, K_CLUSTERS, CLUSTER_SD, N_TEST = 50, 100, 0.02, 20_000


def truth(seed=0):
    """Generating coefficients (w, b): ||w|| = 3 so the classes are well but not fully separated."""
    rng = np.random.default_rng([seed, 999])
    w = rng.normal(size=D)
    return (3.0 * w / np.linalg.norm(w)).astype(np.float32), np.float32(0.5)


def make_data(n, design, seed, chunk=500_000):
    """Float32 X (n, D) and int8 y, generated chunk by chunk (no float64 temporaries of size n)."""
    w, b = truth()
    centres = np.random.default_rng([7, 0]).normal(size=(K_CLUSTERS, D)).astype(np.float32)
    X, y = np.empty((n, D), dtype=np.float32), np.empty(n, dtype=np.int8)
    for k, start in enumerate(range(0, n, chunk)):
        rng = np.random.default_rng([seed, k])
        m = min(chunk, n - start)
        Z = rng.standard_normal((m, D), dtype=np.float32)
        if design == "clustered":
            Z *= CLUSTER_SD
            Z += centres[rng.integers(0, K_CLUSTERS, size=m)]
        X[start:start + m] = Z
        p = 1.0 / (1.0 + np.exp(-(Z @ w + b)))
        y[start:start + m] = rng.random(m, dtype=np.float32) < p
    return X, y
