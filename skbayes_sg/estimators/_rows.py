"""Where the rows of ``fit`` and of the predict methods live: one registry of row kinds.

Each :class:`RowKind` says which inputs it holds and, loaded (only when such input arrives, so
numpy users never import dask), gives a :class:`Rows` record: the validated fit data, the
posterior on them, the class of its row source (for the checks before any pass, its ``kind``
and ``offers``) and predictions on such input.  :func:`rows_for` takes the first kind that holds
``X``; in-memory arrays (dense, CSR, anything ``validate_data`` takes) come last and hold
everything.  A new place for rows (an accelerator array) is one more entry here, a posterior with
its row source (:mod:`skbayes_sg.subsampling._rows`), and nothing in the strategies.
"""

import sys
from dataclasses import dataclass

import numpy as np
from sklearn.utils import assert_all_finite
from sklearn.utils.validation import validate_data

from ..models import Posterior
from ..models._finite import peak_abs
from ..subsampling import InMemoryRows
from ..utils import check_X_scale

__all__ = ["ROW_KINDS", "RowKind", "Rows", "rows_for"]


@dataclass(frozen=True, kw_only=True)
class Rows:
    """What the estimators need of one place where rows live.

    ``fit_data(est, X, y, sample_weight) -> (X, y_enc, n_outputs, weight)`` validates (setting
    ``n_features_in_``, the target attributes) and encodes; ``posterior(model, prior, X, y_enc,
    weight)`` builds the fit's posterior; ``source`` is its row-source class; ``predict(est,
    name, X, *args, **kwargs)`` is ``est.<name>(X, ...)`` on such input.
    """

    fit_data: object
    posterior: object
    source: object
    predict: object


@dataclass(frozen=True, kw_only=True)
class RowKind:
    """A registry entry: ``holds(X)`` says whether ``X`` is of this kind; ``load()`` gives its
    :class:`Rows` (importing what it needs only then)."""

    name: str
    holds: object
    load: object


def _in_memory_fit_data(est, X, y, sample_weight):
    """Validated in-memory data, encoded targets and the row weights (rows of weight zero
    dropped, None when the rest are all ones: the same fit as without those rows)."""
    X, y = validate_data(est, X, y, accept_sparse=est._sparse, order="C",
                         dtype=[np.float64, np.float32], y_numeric=not est._is_classifier,
                         ensure_all_finite=False)
    peak = peak_abs(X)  # one pass: the finiteness check and the scale check below
    if not np.isfinite(peak):
        assert_all_finite(X, input_name="X", estimator_name=type(est).__name__)
    weight = est._row_weights(X, y, sample_weight)
    y_enc, n_outputs = est._encode_targets(y, weight)
    if weight is not None and np.any(weight == 0):  # rows that contribute nothing
        keep = weight > 0
        X, y_enc, weight = X[keep], y_enc[keep], weight[keep]
        peak = peak_abs(X)
    total = X.shape[0] if weight is None else weight.sum()
    check_X_scale(peak, X.dtype, total, *est._curvature_factor(y_enc, total, X.dtype))
    if weight is not None and np.all(weight == 1.0):
        weight = None
    return X, y_enc, n_outputs, weight


def _in_memory_predict(est, name, X, *args, **kwargs):
    """The estimator's in-memory prediction ``est._<name>``."""
    return getattr(est, f"_{name}")(X, *args, **kwargs)


IN_MEMORY = Rows(fit_data=_in_memory_fit_data, posterior=Posterior, source=InMemoryRows,
                 predict=_in_memory_predict)


def _is_dask(X):
    return "dask" in sys.modules and hasattr(X, "__dask_graph__")


def _dask():
    from .. import dask

    return Rows(fit_data=dask.fit_data, posterior=dask.DaskPosterior, source=dask.DaskRows,
                predict=dask.predict_blockwise)


ROW_KINDS = (RowKind(name="dask", holds=_is_dask, load=_dask),
             RowKind(name="in-memory", holds=lambda X: True, load=lambda: IN_MEMORY))


def rows_for(X):
    """The :class:`Rows` of the first kind in :data:`ROW_KINDS` that holds ``X``."""
    return next(kind for kind in ROW_KINDS if kind.holds(X)).load()
