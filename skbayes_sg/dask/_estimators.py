"""The estimators' side of dask input: validated fit data and blockwise predictions.

``fit`` on a dask array or DataFrame validates and encodes lazily (classes and target moments are
small reductions), and returns the dask arrays the :class:`~skbayes_sg.dask.DaskPosterior` takes.
Predictions on dask input are dask arrays: every chunk of rows is predicted on the workers by the
fitted estimator's own in-memory method, and the estimator (with its draws) enters the graph once,
as one key every chunk task depends on -- the way dask-ml's ``ParallelPostFit`` does it.
"""

import dask
import dask.array as da
import numpy as np
from sklearn.utils import assert_all_finite
from sklearn.utils.multiclass import check_classification_targets

from ..utils import SAFE_MOMENTS, check_X_scale

__all__ = ["fit_data", "predict_blockwise"]


def _as_array(X, name):
    """A dask array with known chunk sizes (DataFrames and Series converted)."""
    if hasattr(X, "to_dask_array"):
        X = X.to_dask_array(lengths=True)
    elif not isinstance(X, da.Array):
        raise TypeError(f"{name} is a {type(X).__name__}: pass a dask array or DataFrame.")
    if any(np.isnan(c).any() for c in map(np.asarray, X.chunks)):
        raise ValueError(f"{name} has unknown chunk sizes: call {name}.compute_chunk_sizes() "
                         "(or to_dask_array(lengths=True)) first.")
    return X


def _features(est, X, reset):
    """``X`` as a float dask array with one chunk along the features; checks and sets
    ``n_features_in_`` / ``feature_names_in_`` as ``validate_data`` does."""
    names = list(X.columns) if hasattr(X, "columns") else None
    names = np.asarray(names, dtype=object) if names and all(
        isinstance(c, str) for c in names) else None
    if reset:
        est.__dict__.pop("feature_names_in_", None)
        if names is not None:
            est.feature_names_in_ = names
    elif not np.array_equal(names if names is not None else [],
                            getattr(est, "feature_names_in_", [])) and names is not None:
        raise ValueError("The feature names of X differ from those seen in fit: "
                         f"{list(names)} vs {list(est.feature_names_in_)}.")
    X = _as_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}.")
    if reset:
        est.n_features_in_ = X.shape[1]
    elif X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X.rechunk({1: -1})


def _targets(y, rows):
    """``y`` as a 1-D dask array chunked like the rows of X."""
    y = da.from_array(np.asarray(y), chunks=(rows,)) if not hasattr(y, "__dask_graph__") \
        else _as_array(y, "y")
    if y.ndim != 1 or y.shape[0] != sum(rows):
        raise ValueError(f"y must be 1-D with one value per row of X ({sum(rows)}), got shape "
                         f"{y.shape}.")
    return y.rechunk((rows,))


def _codes(block, classes):
    return np.searchsorted(classes, block)


def _check_X(X, peak):
    """The in-memory checks of ``X`` from its ``max |x|`` (NaN or inf when ``X`` has one)."""
    if not np.isfinite(peak):
        raise ValueError("Input X contains NaN or infinity.")
    check_X_scale(peak, X.dtype, X.shape[0])


def _encode(est, X, y):
    """``(y_enc, n_outputs)`` and the target attributes (``classes_`` or ``y_mean_``/``y_scale_``)
    as the estimators' ``_encode_targets`` set them, with the in-memory checks of ``X`` and
    ``y``: one pass of reductions on the cluster (a second, on ``y / max|y|``, only for a ``y``
    whose squares would overflow or underflow, as :func:`~skbayes_sg.utils.location_scale`)."""
    peak = da.absolute(X).max()
    if est._is_classifier:
        labels, peak = dask.compute(da.unique(y), peak)
        _check_X(X, peak)
        if labels.dtype.kind == "f":
            assert_all_finite(labels, input_name="y")
        check_classification_targets(labels)  # "Unknown label type: continuous" as in memory
        est.classes_ = np.unique(labels)
        if est.classes_.shape[0] < 2:
            raise ValueError(f"The target contains only one class ({est.classes_[0]!r}); a "
                             "classifier needs samples of at least 2 classes.")
        codes = y.map_blocks(_codes, est.classes_, dtype=np.intp)
        return est._code_targets(codes), est.classes_.shape[0]
    y = y.astype(np.float64)
    est.y_mean_, est.y_scale_ = 0.0, 1.0  # as BayesianLinearRegression._encode_targets
    extra = [] if est.normalize_y else [da.dot(y, y)]
    peak, lo, hi, mean, std, *sq = dask.compute(peak, y.min(), y.max(), y.mean(), y.std(),
                                                *extra)
    if not np.isfinite(peak):
        raise ValueError("Input X contains NaN or infinity.")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        bad = "NaN" if np.isnan(lo) or np.isnan(hi) else "infinity"
        raise ValueError(f"Input y contains {bad}.")
    m = max(abs(float(lo)), abs(float(hi)))
    mean, std = float(mean), float(std)
    if m > 0 and not SAFE_MOMENTS[0] < m < SAFE_MOMENTS[1]:  # NumPy's moments over- or underflow: on y / m
        mean, std = (m * float(v) for v in dask.compute((y / m).mean(), (y / m).std()))
    if sq and not np.isfinite(sq[0]):
        raise ValueError(f"y reaches {m:.3g}: its squared residuals overflow float64 with "
                         "normalize_y=False. Use normalize_y=True (y is then standardized "
                         "without overflow) or rescale y.")
    if est.normalize_y:
        est.y_mean_ = mean if est.fit_intercept else 0.0
        est.y_scale_ = std or 1.0
    # the fitted targets' moments (the priors' scales), known without another pass
    sd = std / est.y_scale_
    est._y_moments = ((mean - est.y_mean_) / est.y_scale_, sd, sd * sd)
    y_enc = (y - est.y_mean_) / est.y_scale_
    check_X_scale(peak, X.dtype, X.shape[0], *est._curvature_factor(y_enc, X.shape[0], X.dtype))
    return y_enc, 1


def fit_data(est, X, y, sample_weight=None):
    """Validated dask inputs of ``fit``: ``(X, y_enc, n_outputs, None)`` (no row weights).

    Raises a ValueError for row weights (``sample_weight``, ``class_weight``), which dask input
    does not support yet.
    """
    if sample_weight is not None or getattr(est, "class_weight", None) is not None:
        raise ValueError("sample_weight and class_weight are not supported with dask input yet: "
                         "fit without them, or on in-memory data.")
    X = _features(est, X, reset=True)
    y_enc, n_outputs = _encode(est, X, _targets(y, X.chunks[0]))
    return X, y_enc, n_outputs, None


def _call(block, est, name, columns, args, kwargs):
    """``est.<name>(block)`` (a DataFrame with ``columns`` when X had feature names)."""
    if columns is not None:
        import pandas as pd

        block = pd.DataFrame(block, columns=columns)
    return getattr(est, name)(block, *args, **kwargs)


def _apply(block, est, name, columns, args, kwargs):
    """Worker side: :func:`_call`, a tuple output stacked along a last axis."""
    out = _call(block, est, name, columns, args, kwargs)
    return np.stack(out, axis=-1) if isinstance(out, tuple) else out


def predict_blockwise(est, name, X, *args, **kwargs):
    """``est.<name>(X)`` on a dask X, as a dask array (a tuple of them for tuple outputs).

    Each chunk calls the public method on its in-memory rows (which the estimators route to
    their in-memory prediction)."""
    columns = list(X.columns) if hasattr(X, "columns") else None
    X = _features(est, X, reset=False)
    probe = _call(np.zeros((1, X.shape[1]), dtype=X.dtype), est, name, columns, args, kwargs)
    out = np.stack(probe, axis=-1) if isinstance(probe, tuple) else np.asarray(probe)
    shared = dask.delayed(est, pure=False, traverse=False)  # one key: the draws travel once
    layout = {"drop_axis": 1} if out.ndim == 1 else {"chunks": (X.chunks[0], out.shape[1:])}
    result = X.map_blocks(_apply, shared, name, columns, args, kwargs, dtype=out.dtype,
                          meta=np.empty((0,) * out.ndim, dtype=out.dtype), **layout)
    if isinstance(probe, tuple):
        return tuple(result[:, j] for j in range(out.shape[1]))
    return result
