"""Dask input for the estimators: ``fit`` and the predict methods hand dask collections to
:mod:`skbayes_sg.dask`, imported only when such input arrives (numpy users never import dask)."""

import functools
import sys

from sklearn.utils.validation import check_is_fitted

__all__ = ["DASK_METHODS", "dask_backend", "dask_dispatch"]

DASK_METHODS = ("predict", "predict_proba", "predict_log_proba", "decision_function")


def dask_backend(X):
    """:mod:`skbayes_sg.dask` for a dask collection (imported only then), else None."""
    if "dask" not in sys.modules or not hasattr(X, "__dask_graph__"):
        return None
    from .. import dask as backend

    return backend


def dask_dispatch(method):
    """``method``, returning a dask array computed blockwise when ``X`` is a dask collection."""
    @functools.wraps(method)
    def dispatch(self, X, *args, **kwargs):
        backend = dask_backend(X)
        if backend is None:
            return method(self, X, *args, **kwargs)
        check_is_fitted(self)
        return backend.predict_blockwise(self, method.__name__, X, *args, **kwargs)

    dispatch._dask_dispatch = True
    return dispatch
