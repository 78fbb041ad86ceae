"""Checks of ``fit``'s data that scikit-learn's validation leaves out: the row weights' total,
``class_weight``'s values, and the scale of ``X`` (in memory and on dask input alike)."""

from numbers import Real

import numpy as np

__all__ = ["WEIGHT_SUM_MAX", "X_CURVATURE_FRACTION", "check_class_weight", "check_weight_total",
           "check_X_scale"]

#: largest sum of the row weights: the posterior sd shrinks like 1 / sqrt(sum of weights), and
#: past ~1e27 float64 draws of O(1) parameters can no longer resolve it (1e20 leaves a margin)
WEIGHT_SUM_MAX = 1e20
#: the likelihood's curvature bound max|x|^2 * (sum of weights) must stay below this fraction of
#: the largest float of X's dtype (the Hessians and Gauss-Newton curvatures sum those squares)
X_CURVATURE_FRACTION = 1e-6


def check_weight_total(weight, name):
    """Raise a ValueError naming ``name`` unless ``0 < weight.sum() <= WEIGHT_SUM_MAX``."""
    with np.errstate(over="ignore"):
        total = float(np.sum(weight))
    if not total > 0:
        raise ValueError(f"{name} sums to zero: at least one row needs a positive weight.")
    if not total <= WEIGHT_SUM_MAX:
        raise ValueError(
            f"{name} sums to {total:.3g}, beyond {WEIGHT_SUM_MAX:.0e}: the posterior's width "
            "shrinks like 1/sqrt(sum of weights), and float64 draws cannot resolve it that "
            "narrow. Rescale the weights (their ratios set each row's share, their sum the "
            "amount of data).")


def check_class_weight(class_weight):
    """Raise unless a ``class_weight`` dict holds finite, non-negative numbers, not all zero."""
    values = list(class_weight.values())
    if not all(isinstance(v, Real) and not isinstance(v, bool) for v in values):
        raise TypeError(f"class_weight values must be real numbers, got {class_weight!r}.")
    values = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(values) & (values >= 0)):
        raise ValueError("class_weight values must be finite and non-negative, got "
                         f"{class_weight!r}.")
    if values.size and not np.any(values > 0):
        raise ValueError(f"class_weight is zero for every class ({class_weight!r}): at least "
                         "one class needs a positive weight.")


def check_X_scale(peak, dtype, total, precision=1.0, remedies=()):
    """Raise a ValueError when ``max|x| = peak`` makes the likelihood's curvature overflow.

    ``total``: the number of rows, or the sum of the row weights; ``precision``: the largest
    factor the likelihood puts on ``x^2`` (a regression's noise precision ``1 / noise_std^2``
    in the fitted units, 1 for the classifiers); ``remedies``: what else the user can do.  The
    curvature of every model's likelihood sums ``weight * precision * x^2`` over the rows;
    ``peak^2 * total * precision`` bounds it, and ``precision`` itself must stay in range.
    """
    dtype = np.dtype(dtype)
    limit = X_CURVATURE_FRACTION * float(np.finfo(dtype).max)
    remedies = list(remedies) + (["pass X as float64"] if dtype == np.float32 else [])
    with np.errstate(over="ignore", invalid="ignore"):
        bound = float(np.float64(peak) ** 2 * np.float64(total) * np.float64(precision))
    if precision > limit:
        raise ValueError(
            f"The noise precision 1/noise_std^2 reaches {precision:.3g} (in the fitted units of "
            f"y), past what {dtype} computes safely ({limit:.3g}). "
            f"{_either(remedies)}.")
    if bound > limit:
        noise = "" if precision == 1.0 else f", times the noise precision up to {precision:.3g}"
        raise ValueError(
            f"X reaches {peak:.3g}: the likelihood's curvature (weighted x^2 summed over the "
            f"rows{noise}: up to {bound:.3g}) passes what {dtype} computes safely "
            f"({limit:.3g}). {_either(['Standardize X (e.g. StandardScaler)'] + remedies)}.")


def _either(remedies):
    """``"A, b or c"``."""
    text = remedies[0] if len(remedies) == 1 else f"{', '.join(remedies[:-1])} or {remedies[-1]}"
    return text[:1].upper() + text[1:]
