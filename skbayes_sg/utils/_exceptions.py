"""Exceptions and warnings of skbayes_sg."""

from sklearn.exceptions import ConvergenceWarning

__all__ = ["ConvergenceWarning", "DivergenceError"]


class DivergenceError(ValueError):
    """A chain produced non-finite or exploding parameters.

    Raised instead of returning NaN draws; the message names the chain, the
    step, the step size and what to try (a smaller ``step_size``, standardized
    features, a preconditioner).
    """
