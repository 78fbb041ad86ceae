"""Centre and scale of a target without overflow (``normalize_y``)."""

import numpy as np

__all__ = ["location_scale", "standardize", "weighted_moments", "SAFE_MOMENTS"]

SAFE_MOMENTS = (1e-100, 1e100)  # max |y| for which NumPy's mean and std neither overflow nor underflow


def location_scale(y, center=True, weight=None):
    """Mean and standard deviation of ``y``, finite for any finite ``y``.

    ``np.std`` squares ``y``: past ~1e154 the squares overflow, below ~1e-154 they underflow to 0
    (a scale of 0, then 1, leaves a tiny ``y`` unstandardized).  Outside ``(1e-100, 1e100)``
    both are computed on ``y / max|y|`` and scaled back, which needs no more range than ``y``
    itself (``|mean| <= max|y|``, ``sd <= max|y|``).  Ordinary ``y`` takes the plain path, so its
    results are exactly NumPy's.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Finite values.
    center : bool, default=True
        Return the mean as the centre; ``False`` gives centre 0 (the scale is still the
        standard deviation about the mean).
    weight : ndarray of shape (n,) or None, default=None
        Non-negative frequency weights of finite sum: the weighted mean and the weighted
        standard deviation ``sqrt(sum w (y - mean)^2 / sum w)``, those of ``y`` with row ``i``
        repeated ``w_i`` times.  Computed on ``y / max|y|``.

    Returns
    -------
    mean : float
        The centre (0.0 when not ``center``).
    scale : float
        The standard deviation; when it is 0 (constant ``y``) ``|y|`` without ``center`` (the
        standardized ``y`` is then +-1), else 1.0.
    """
    m = float(np.max(np.abs(y))) if y.size else 0.0
    if weight is not None and m > 0:
        p, u = weight / np.sum(weight), y / m
        mu = float(p @ u)
        mean, sd = m * mu, m * float(np.sqrt(p @ np.square(u - mu)))
    elif SAFE_MOMENTS[0] < m < SAFE_MOMENTS[1]:
        mean, sd = float(np.mean(y)), float(np.std(y))
    elif m > 0:
        u = y / m
        mean, sd = m * float(np.mean(u)), m * float(np.std(u))
    else:
        mean, sd = 0.0, 0.0
    if center or sd > 0:
        return (mean if center else 0.0), (sd or 1.0)
    return 0.0, (abs(mean) or 1.0)  # constant y (one row) not centred: scaled to +-1


def standardize(y, mean, scale):
    """``(y - mean) / scale`` without intermediate overflow (``|y - mean|`` can pass 1.8e308).

    Parameters
    ----------
    y : ndarray of shape (n,)
    mean, scale : float
        From :func:`location_scale`.

    Returns
    -------
    z : ndarray of shape (n,)
        Finite when ``y`` is finite and ``z`` itself is representable.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        z = (y - mean) / scale
    if not np.isfinite(z).all():
        m = float(np.max(np.abs(y)))
        with np.errstate(over="ignore"):
            z = (y / m - mean / m) / (scale / m)
    return z


def weighted_moments(y, weight):
    """``(mean, sd, variance)`` of ``y`` under frequency weights ``weight`` (no rescaling:
    for standardized targets)."""
    p = weight / np.sum(weight)
    mean = float(p @ y)
    var = float(p @ np.square(y - mean))
    return mean, float(np.sqrt(var)), var
