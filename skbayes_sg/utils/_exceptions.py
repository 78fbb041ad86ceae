"""Exceptions and warnings of skbayes_sg.

The library's warnings derive from :class:`SkbayesSGWarning`, not from scikit-learn's: filtering
``sklearn.exceptions.ConvergenceWarning`` (e.g. for ``MLPClassifier``) leaves them shown, and
``warnings.simplefilter("ignore", SkbayesSGWarning)`` silences all of them at once.
"""

__all__ = ["ApproximationWarning", "ConvergenceWarning", "DivergenceError", "SkbayesSGWarning"]


class DivergenceError(ValueError):
    """A chain produced non-finite or exploding parameters.

    Raised instead of returning NaN draws; the message names the chain, the step, the step size and
    what to try (a smaller ``step_size``, standardized features, a preconditioner).
    """


class SkbayesSGWarning(UserWarning):
    """Base class of every warning skbayes_sg emits.

    Each message is at most three short lines: what is wrong, the key figure, what to do; the
    details stay in the estimator's ``diagnostics_`` and ``summary()``.
    """


class ConvergenceWarning(SkbayesSGWarning):
    """The chains (or the mode search) did not converge.

    Emitted by ``fit`` when the verdict fails (split R-hat above 1.01 or bulk / tail ESS below
    100 per chain after the run-until-converged budget), or when the L-BFGS mode search stops at
    its iteration limit.  Not a subclass of scikit-learn's ``ConvergenceWarning``: filter
    ``skbayes_sg.ConvergenceWarning`` to silence it.  The full list of problems is in
    ``diagnostics_["convergence_problems"]`` and ``summary()``.
    """


class ApproximationWarning(SkbayesSGWarning):
    """The sampled posterior is a deliberate approximation measurably far from the exact one.

    Emitted by ``fit`` when a strategy that changes the target (``compressed``) estimates that its
    posterior mode lies more than a few tenths of a posterior standard deviation from the full-data
    mode, when plain minibatch sums are shared across chains, or when a user-set ``step_size`` is
    predicted to bias the posterior variance; the message says which setting to change.
    """
