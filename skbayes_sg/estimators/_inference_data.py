"""Pointwise log-likelihood and the ArviZ export (``log_likelihood``, ``to_inference_data``)."""

import inspect

import numpy as np

from ..utils import row_chunks

__all__ = ["inference_data", "pointwise_log_likelihood"]

_ELEMENTS = 1 << 22  # draws x rows per log-likelihood chunk


def pointwise_log_likelihood(est, X, y):
    """``log p(y_i | x_i, theta_s)`` for every stored draw and row: ``(n_chains, n_draws, n)``.

    A true log density in the user's units: the Gaussian constant ``-log(2 pi) / 2`` that the
    regression model drops and the ``normalize_y`` Jacobian ``-log y_scale_`` are added back.
    """
    draws = est._pooled_draws()
    out = np.empty((draws.shape[0], X.shape[0]))
    for sl in row_chunks(draws.shape[0], X.shape[0], rows=draws.shape[0], elements=_ELEMENTS):
        out[sl] = -est.model_.nll(draws[sl], X, y)
    if est.model_.is_regression:
        out -= np.log(est.y_scale_) + 0.5 * np.log(2.0 * np.pi)
    return out.reshape(*est.draws_.shape[:2], X.shape[0])


def _dims(est, groups):
    """ArviZ ``dims`` and ``coords``: the feature axis named ``feature`` when names exist."""
    names = getattr(est, "feature_names_in_", None)
    dims = {}
    for name, values in groups.items():
        axes = [f"{name}_dim_{k}" for k in range(values.ndim - 2)]
        if names is not None and name in est._feature_axes():
            axes[est._feature_axes()[name]] = "feature"
        dims[name] = axes
    return dims, ({} if names is None else {"feature": list(names)})


def inference_data(est, X=None, y=None):
    """See :meth:`~skbayes_sg.estimators._report._ReportMixin.to_inference_data`."""
    try:
        import arviz as az
    except ImportError as exc:
        raise ImportError("to_inference_data needs ArviZ: pip install arviz") from exc
    posterior = {name: np.asarray(v) for name, (v, _) in est._groups().items()}
    C, D = est.draws_.shape[:2]
    steps = np.asarray(est.diagnostics_["step_size_per_chain"], dtype=float)
    groups = {"posterior": posterior,
              "sample_stats": {"step_size": np.repeat(steps.reshape(C, 1), D, axis=1)}}
    if X is not None:
        X, y_enc = est._validate_X_predict(X), est._training_targets(y, len(X))
        groups["log_likelihood"] = {"y": pointwise_log_likelihood(est, X, y_enc)}
        groups["observed_data"] = {"y": np.asarray(y)}
    dims, coords = _dims(est, posterior)
    d = est.diagnostics_
    attrs = {"inference_library": "skbayes_sg",
             **{k: d[k] for k in ("n_grad_evals", "data_passes", "sampling_seconds")}}
    if "posterior" in inspect.signature(az.from_dict).parameters:  # ArviZ < 1.0
        return az.from_dict(**groups, coords=coords, dims=dims, attrs=attrs)
    return az.from_dict(groups, coords=coords, dims=dims)
