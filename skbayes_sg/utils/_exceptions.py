"""Exceptions and warnings of skbayes_sg."""

from sklearn.exceptions import ConvergenceWarning

__all__ = ["ApproximationWarning", "ConvergenceWarning", "DivergenceError"]


class DivergenceError(ValueError):
    """A chain produced non-finite or exploding parameters.

    Raised instead of returning NaN draws; the message names the chain, the step, the step size and
    what to try (a smaller ``step_size``, standardized features, a preconditioner).
    """


class ApproximationWarning(UserWarning):
    """The sampled posterior is a deliberate approximation measurably far from the exact one.

    Emitted by ``fit`` when a strategy that changes the target (``compressed``) estimates that its
    posterior mode lies more than a few tenths of a posterior standard deviation from the full-data
    mode; the message says which setting to change.
    """
