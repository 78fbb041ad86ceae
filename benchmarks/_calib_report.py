"""Scoring and tables of ``calibration.py``: tolerance against a reference, per-cell summaries.

A fit is *in tolerance* when every compared quantity's posterior mean is within
``MEAN_TOL`` reference sds of the reference mean and every sd ratio lies in ``SD_RATIO``; both
bounds are widened by two Monte-Carlo standard errors of the reference itself (zero for a closed
form), so reference noise cannot turn a correct fit into a failure.
"""

import numpy as np

__all__ = ["MEAN_TOL", "SD_RATIO", "score", "summarize_cell", "markdown_cell", "figure"]

MEAN_TOL = 0.3  # |mean error| in posterior sds
SD_RATIO = (0.8, 1.25)  # accepted sd_fit / sd_ref


def score(mean, sd, ref):
    """Errors of one fit's quantity means ``mean`` and sds ``sd`` against ``ref``.

    Returns a dict: ``max_z`` (largest |mean error| in reference sds), ``sd_ratio_min/max``
    and ``in_tol`` (every quantity within the widened bounds).
    """
    z = np.abs(np.asarray(mean) - ref.mean) / ref.sd
    ratio = np.asarray(sd) / ref.sd
    z_ok = z <= MEAN_TOL + 2.0 * ref.mean_se / ref.sd
    lo, hi = SD_RATIO[0] / (1.0 + 2.0 * ref.sd_rse), SD_RATIO[1] / (1.0 - 2.0 * ref.sd_rse)
    in_tol = bool(np.all(z_ok & (ratio >= lo) & (ratio <= hi)))
    worst = int(np.argmax(np.maximum(z / MEAN_TOL, np.abs(np.log(ratio)) / np.log(SD_RATIO[1]))))
    return {"max_z": float(z.max()), "sd_ratio_min": float(ratio.min()),
            "sd_ratio_max": float(ratio.max()), "in_tol": in_tol, "worst": ref.labels[worst]}


def _frac(k, n):
    return None if n == 0 else k / n


def summarize_cell(fits):
    """Counts and fractions of one problem x configuration over its seeds.

    ``flagged_out`` is the fraction of failed fits (out of tolerance, or raised an error) that
    warned or raised: it must be 1.  ``false_alarm`` is the fraction of in-tolerance fits that
    warned (target <= 0.05).
    """
    done = [f for f in fits if "error" not in f]
    n_raised = len(fits) - len(done)
    inn = [f for f in done if f["in_tol"]]
    out = [f for f in done if not f["in_tol"]]
    n_out_warned = sum(f["warned"] for f in out)
    n_alarm = sum(f["warned"] for f in inn)
    med = (lambda key: float(np.median([f[key] for f in done])) if done else None)
    return {"n": len(fits), "n_in_tol": len(inn), "n_out_tol": len(out), "n_raised": n_raised,
            "in_tol": _frac(len(inn), len(fits)),
            "flagged_out": _frac(n_out_warned + n_raised, len(out) + n_raised),
            "silent": len(out) - n_out_warned,
            "n_false_alarm": n_alarm, "false_alarm": _frac(n_alarm, len(inn)),
            "median_seconds": med("seconds"), "median_data_passes": med("data_passes"),
            "median_max_z": med("max_z"), "median_max_rhat": med("max_rhat"),
            "sd_ratio_range": ([min(f["sd_ratio_min"] for f in done),
                                max(f["sd_ratio_max"] for f in done)] if done else None),
            "errors": sorted({f["error"] for f in fits if "error" in f})}


def _pct(x):
    return "–" if x is None else f"{100 * x:.0f}%"


def _num(x, fmt):
    return "–" if x is None else format(x, fmt)


def markdown_cell(config, s):
    """One table row of a summary from :func:`summarize_cell`."""
    silent = f"**{s['silent']}**" if s["silent"] else "0"
    fa = _pct(s["false_alarm"])
    if s["false_alarm"] is not None and s["false_alarm"] > 0.05:
        fa = f"**{fa}**"
    rng = s["sd_ratio_range"]
    return (f"| {config} | {s['n']} | {_pct(s['in_tol'])} | {s['n_raised']} | "
            f"{_pct(s['flagged_out'])} | {silent} | {fa} | {_num(s['median_max_z'], '.2f')} | "
            + ("–" if rng is None else f"{rng[0]:.2f}–{rng[1]:.2f}")
            + f" | {_num(s['median_max_rhat'], '.3f')} | {_num(s['median_seconds'], '.2f')} | "
            f"{_num(s['median_data_passes'], '.0f')} |")


TABLE_HEAD = ("| configuration | fits | in tol | raised | failures flagged | silent | false "
              "alarms | median max z | sd ratios (all fits) | median max R-hat | median s | "
              "median passes |\n" + "|---" * 12 + "|")


def figure(results):
    """Draw function for ``save_plot``: every fit's worst mean error vs worst sd ratio."""
    def draw(plt):
        fig, ax = plt.subplots(figsize=(7, 5))
        fits = [f for cells in results.values() for c in cells.values() for f in c["fits"]
                if "error" not in f]
        for warned, colour, label in ((False, "tab:blue", "no warning"),
                                      (True, "tab:orange", "warned")):
            sel = [f for f in fits if f["warned"] == warned]
            worst = [max(abs(np.log(f["sd_ratio_min"])), abs(np.log(f["sd_ratio_max"])))
                     for f in sel]
            ax.scatter([max(f["max_z"], 1e-3) for f in sel], np.exp(worst), s=8, c=colour,
                       label=label, alpha=0.6)
        ax.axvline(MEAN_TOL, color="k", lw=0.7, ls=":")
        ax.axhline(SD_RATIO[1], color="k", lw=0.7, ls=":")
        ax.set(xscale="log", yscale="log", xlabel="max |mean error| / reference sd",
               ylabel="worst sd ratio (max of r, 1/r)",
               title="calibration: every fit (dotted: tolerance)")
        ax.legend()
        fig.tight_layout()
        return fig
    return draw
