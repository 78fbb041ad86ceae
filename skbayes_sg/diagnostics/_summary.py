"""Posterior summary table (moments, quantiles, ESS, R-hat) without pandas."""

import numpy as np

from ._ess import _as_draws, effective_sample_size
from ._rhat import split_rhat

__all__ = ["summarize", "format_table"]


def _quantile_label(q):
    """``0.05 -> "q5"``, ``0.5 -> "q50"``, ``0.025 -> "q2.5"``."""
    return f"q{100.0 * q:.10g}"


def summarize(draws, names=None, quantiles=(0.05, 0.5, 0.95)):
    """Per-parameter posterior summary of pooled chains.

    Parameters
    ----------
    draws : array_like of shape (n_chains, n_draws, n_params) or (n_chains, n_draws)
        Post-warmup draws; 2-D input is one parameter. ESS and R-hat need at
        least 4 draws per chain and are NaN below that.
    names : sequence of str, optional
        Parameter names; default ``"theta[0]", "theta[1]", ...``.
    quantiles : sequence of float, default=(0.05, 0.5, 0.95)
        Probabilities in ``[0, 1]``; each gives a column ``"q<100 p>"``.

    Returns
    -------
    summary : dict of str to ndarray of shape (n_params,)
        Keys, in order: ``"name"``, ``"mean"``, ``"sd"`` (``ddof=1``), one key per quantile
        (``"q5"``, ``"q50"``, ``"q95"`` by default), ``"ess_bulk"``, ``"ess_tail"``, ``"rhat"``.
        ESS and R-hat are NaN for a constant parameter (see :func:`effective_sample_size`).

    See Also
    --------
    format_table : the summary as aligned plain text.

    References
    ----------
    .. [1] Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C.
       (2021). Rank-normalization, folding, and localization: an improved R-hat
       for assessing convergence of MCMC. Bayesian Analysis, 16(2), 667-718.
    """
    x, _ = _as_draws(draws, min_draws=1)
    n_params = x.shape[2]
    if names is None:
        names = [f"theta[{i}]" for i in range(n_params)]
    names = np.asarray([str(name) for name in names])
    if names.shape != (n_params,):
        raise ValueError(f"got {names.size} names for {n_params} parameters.")
    probs = np.asarray(quantiles, dtype=float).reshape(-1)
    if np.any((probs < 0) | (probs > 1)):
        raise ValueError(f"quantiles must lie in [0, 1], got {quantiles}.")
    flat = x.reshape(-1, n_params)
    summary = {"name": names, "mean": flat.mean(axis=0), "sd": flat.std(axis=0, ddof=1)}
    values = np.quantile(flat, probs, axis=0)
    for q, value in zip(probs, values, strict=True):
        summary[_quantile_label(q)] = value
    if x.shape[1] < 4:
        for key in ("ess_bulk", "ess_tail", "rhat"):
            summary[key] = np.full(n_params, np.nan)
        return summary
    summary["ess_bulk"] = effective_sample_size(x, method="bulk")
    summary["ess_tail"] = effective_sample_size(x, method="tail")
    summary["rhat"] = split_rhat(x)
    return summary


def _format_cell(key, value, digits):
    if not np.isfinite(value):
        return str(value)
    if key.startswith("ess"):
        return f"{value:.0f}"
    if key == "rhat":
        return f"{value:.3f}"
    return f"{value:.{digits}g}"


def format_table(summary, names=None, digits=4):
    """Render a :func:`summarize` result as an aligned plain-text table.

    Parameters
    ----------
    summary : dict of str to array_like
        Columns of equal length, e.g. from :func:`summarize`.
    names : sequence of str, optional
        Row labels; default ``summary["name"]``, else ``0, 1, ...``.
    digits : int, default=4
        Significant digits of moments and quantiles (ESS is shown as an
        integer, R-hat with three decimals).

    Returns
    -------
    table : str
        One header line and one line per parameter; labels left-aligned,
        numbers right-aligned, columns separated by two spaces.

    References
    ----------
    .. [1] Stan Development Team. CmdStan User's Guide: ``stansummary``.
    """
    columns = [key for key in summary if key != "name"]
    n_rows = len(np.atleast_1d(summary[columns[0]])) if columns else 0
    if names is None:
        names = summary.get("name", range(n_rows))
    labels = [str(name) for name in names]
    if len(labels) != n_rows:
        raise ValueError(f"got {len(labels)} names for {n_rows} rows.")
    cells = [
        [_format_cell(key, float(v), digits) for v in np.atleast_1d(summary[key])]
        for key in columns
    ]
    widths = [max([len(key)] + [len(c) for c in col]) for key, col in zip(columns, cells)]
    width = max([len(label) for label in labels] + [0])
    header = [" " * width] + [key.rjust(w) for key, w in zip(columns, widths)]
    lines = ["  ".join(header).rstrip()]
    for row, label in enumerate(labels):
        cols = [col[row].rjust(w) for col, w in zip(cells, widths)]
        lines.append("  ".join([label.ljust(width)] + cols))
    return "\n".join(lines)
