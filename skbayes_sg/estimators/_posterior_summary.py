"""``PosteriorSummary``: what ``summary()`` returns, and its warnings in plain words."""

import numpy as np

from ..diagnostics import ESS_PER_CHAIN, RHAT_MAX, format_table
from ._progress import format_seconds

__all__ = ["PosteriorSummary", "convergence_warnings"]

_WORST = 5  # rows printed for a group larger than max_rows


def convergence_warnings(diagnostics):
    """Plain-language warnings of a fit, from its ``diagnostics_``.

    Parameters
    ----------
    diagnostics : dict
        The estimator's ``diagnostics_``.

    Returns
    -------
    warnings : list of str
        The convergence problems ``fit`` found (``diagnostics["convergence_problems"]``: the one
        judgement of :func:`skbayes_sg.diagnostics.assess`; the networks': the pooled predictive's
        Monte-Carlo error),
        step-size retries and HMC divergences; empty when none were found.
    """
    out = list(diagnostics.get("convergence_problems", ()))
    retries = int(diagnostics.get("step_size_retries", 0))
    if retries:
        out.append(f"the automatic step size diverged in warm-up and was divided by 4 "
                   f"{retries} time(s); consider standardizing X.")
    divergent = int(np.sum(diagnostics.get("n_divergent", 0)))
    if divergent:
        out.append(f"{divergent} divergent HMC transitions: the posterior has regions "
                   "the step size cannot follow; raise target_accept (e.g. "
                   "sampler=HMC(target_accept=0.95)) for a smaller adapted step.")
    return out


class PosteriorSummary:
    """Posterior summary per parameter group, cost, and warnings.

    Attributes
    ----------
    groups : dict of str to dict of str to ndarray
        ``groups[name][column]`` has the shape of the parameter group (e.g.
        ``groups["coef"]["mean"]`` is shaped like ``coef_``); columns are
        ``"mean"``, ``"sd"``, one per quantile (``"q5"``, ``"q50"``,
        ``"q95"``), ``"ess_bulk"``, ``"ess_tail"`` and ``"rhat"``.
    cost : dict
        ``"seconds"``, ``"preprocessing_seconds"``, ``"sampling_seconds"``,
        ``"n_grad_evals"``, ``"data_passes"``.
    warnings : list of str
        Convergence problems in plain words (empty when none were found).
    header : str
        One line describing the run.
    """

    def __init__(self, groups, cost, warnings, header, max_rows=30, axis_labels=None):
        self.groups, self.cost, self.warnings = groups, cost, list(warnings)
        self.header, self.max_rows = header, max_rows
        self.axis_labels = {} if axis_labels is None else axis_labels

    def _labels(self, name, shape):
        """``name[i,j]`` per parameter, with an axis's labels (feature names) where given."""
        axes = self.axis_labels.get(name, {})

        def part(ax, i):
            return str(axes[ax][i]) if ax in axes else str(i)

        return [name + (f"[{','.join(part(ax, i) for ax, i in enumerate(idx))}]" if idx else "")
                for idx in np.ndindex(shape)]

    def __getitem__(self, name):
        return self.groups[name]

    def __contains__(self, name):
        return name in self.groups

    @property
    def converged(self):
        """True when there are no warnings."""
        return not self.warnings

    def group_table(self, name, max_rows=None):
        """The plain-text table of one group (its 5 worst R-hats if it is large)."""
        cols = self.groups[name]
        shape = next(iter(cols.values())).shape
        labels = self._labels(name, shape)
        flat = {k: np.ravel(v) for k, v in cols.items()}
        max_rows = self.max_rows if max_rows is None else max_rows
        title = f"{name} {shape}" if shape else name
        if len(labels) <= max_rows:
            return f"{title}\n{format_table(flat, labels)}"
        order = np.argsort(-np.nan_to_num(flat["rhat"], nan=np.inf), kind="stable")[:_WORST]
        worst = {k: v[order] for k, v in flat.items()}
        return (f"{title}: {len(labels)} parameters, the {_WORST} with the highest R-hat "
                f"(min bulk ESS {np.nanmin(flat['ess_bulk']):.0f}, max R-hat "
                f"{np.nanmax(flat['rhat']):.3f})\n"
                + format_table(worst, [labels[i] for i in order]))

    def __str__(self):
        c = self.cost
        parts = [self.header, ""]
        parts += [self.group_table(name) + "\n" for name in self.groups]
        parts.append(f"cost: {format_seconds(c['seconds'])} (preprocessing "
                     f"{format_seconds(c['preprocessing_seconds'])}, sampling "
                     f"{format_seconds(c['sampling_seconds'])}), {c['n_grad_evals']:,} "
                     f"gradient evaluations = {c['data_passes']:.1f} data passes")
        if self.warnings:
            parts.append("warnings:")
            parts += [f"  * {w}" for w in self.warnings]
        else:
            parts.append(f"no warnings: every R-hat <= {RHAT_MAX} and every bulk and "
                         f"tail ESS >= {ESS_PER_CHAIN} per chain.")
        return "\n".join(parts)

    def __repr__(self):
        return str(self)

    def to_dict(self):
        """``{"groups": ..., "cost": ..., "warnings": ...}`` (plain containers)."""
        return {"groups": self.groups, "cost": dict(self.cost), "warnings": list(self.warnings)}
