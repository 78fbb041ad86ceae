"""Preprocessing results reused within a fit: computed once per posterior and Laplace.

``batch_size="auto"`` builds the strategy a second time at the batch it picks; what the build
computes from the data (preference weights, the control-variate anchor) does not depend on the
batch, and recomputing it cost a pass each (on a 10^6-row default fit, 2 of the 10 preprocessing
passes).  The results are held weakly by the objects they were computed from, so they go with the
fit; a repeated call returns them with 0 evaluations, so the pass counts stay honest.
"""

import weakref

__all__ = ["computed", "once_per"]

class _Node:
    """Results computed from one chain of owners, and the longer chains below it."""

    __slots__ = ("children", "results")

    def __init__(self):
        self.children, self.results = weakref.WeakKeyDictionary(), {}


_ROOT = _Node()


def once_per(owners, key, compute):
    """``compute() -> (value, n_grad_evals)`` once per tuple of ``owners`` and hashable ``key``.

    Parameters
    ----------
    owners : tuple of objects
        What the result was computed from (a Posterior, a Laplace): held weakly, compared by
        identity.
    key : hashable
        The remaining arguments.
    compute : callable
        Returns ``(value, n_grad_evals)``.

    Returns
    -------
    value
    n_grad_evals : int
        ``compute``'s on the first call, 0 afterwards.
    """
    node = _ROOT
    for owner in owners:
        node = node.children.get(owner) or node.children.setdefault(owner, _Node())
    if key in node.results:
        return node.results[key][0], 0
    node.results[key] = compute()
    return node.results[key]


def computed(owners, key):
    """Whether :func:`once_per` already holds a result for ``owners`` and ``key``."""
    node = _ROOT
    for owner in owners:
        node = node.children.get(owner)
        if node is None:
            return False
    return key in node.results
