"""Softmax numerics over class-major logits ``(C, K, b)``, in place."""

import numpy as np

__all__ = ["log_normaliser", "softmax_inplace"]


def softmax_inplace(z):
    """Softmax over axis 1 of class-major logits ``(C, K, b)``, in place."""
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def log_normaliser(z):
    """``logsumexp`` over axis 1 of class-major logits ``(C, K, b)`` -> ``(C, b)``; leaves
    ``z`` holding ``e^{z - max}`` (the unnormalised softmax) and returns the sums too.

    Faster than ``scipy.special.logsumexp``, whose checks and copies would dominate the
    softmax mode search; a non-finite maximum is replaced by 0 as scipy does.
    """
    top = z.max(axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    z -= top
    np.exp(z, out=z)
    sums = z.sum(axis=1)
    lse = np.log(sums)
    lse += top[:, 0]
    return lse, sums
