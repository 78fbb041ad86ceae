"""Shared benchmark helpers: data loading, machine description, fits, JSON/Markdown output."""

import argparse
import importlib
import json
import os
import platform
import resource
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from skbayes_sg.utils import ApproximationWarning

__all__ = ["LIBRARY_WARNINGS", "cli", "data_dir", "header", "jax_versions", "load_npz",
           "machine", "mean_sd", "peak_rss_mib", "quiet_fit", "save_plot", "write_json",
           "write_markdown"]

# what counts as "the library warned" in the accuracy tables
LIBRARY_WARNINGS = (ConvergenceWarning, ApproximationWarning)


def data_dir(cli_value=None):
    """Directory of the ``.npz`` data sets: ``--data-dir``, ``SKBAYES_SG_DATA``, or None."""
    for cand in (cli_value, os.environ.get("SKBAYES_SG_DATA")):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


def load_npz(name, cli_value=None):
    """Arrays of ``name.npz`` from the data directory, or None when absent."""
    d = data_dir(cli_value)
    if d is None or not (d / f"{name}.npz").exists():
        return None
    with np.load(d / f"{name}.npz", allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def machine():
    """Hardware and versions for every results table."""
    import scipy
    import sklearn

    import skbayes_sg

    return {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "skbayes_sg": skbayes_sg.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.platform(),
    }


def quiet_fit(est, X, y):
    """``(est, wall seconds)`` of ``est.fit(X, y)`` with warnings silenced.

    Benchmarks run short or deliberately mistuned chains whose convergence warnings are expected;
    the tables report the diagnostics themselves.
    """
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est, time.perf_counter() - t0


def peak_rss_mib():
    """Peak resident memory of this process so far, in MiB (``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def jax_versions(modules, missing):
    """Versions of jax and ``modules`` (float64 enabled), or None when one cannot be imported.

    ``missing`` is the message printed then, with ``{exc}`` standing for the import error.
    """
    try:
        mods = {name: importlib.import_module(name) for name in ("jax", *modules)}
    except ImportError as exc:
        print(missing.format(exc=exc), flush=True)
        return None
    mods["jax"].config.update("jax_enable_x64", True)
    return {name: mod.__version__ for name, mod in mods.items()}


def write_json(path, payload):
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(payload, indent=2, default=float))


def write_markdown(path, text):
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)


def cli(doc, **extra):
    """Parse the standard benchmark options (``--quick --json --markdown --data-dir --plot``).

    ``extra`` maps further option names to ``add_argument`` keyword dicts, e.g.
    ``seeds={"type": int, "default": 10}`` gives ``--seeds``.
    """
    ap = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny smoke run (seconds)")
    ap.add_argument("--json", help="write machine-readable results here")
    ap.add_argument("--markdown", help="write the Markdown table here")
    ap.add_argument("--data-dir", help="directory of the .npz data sets (or SKBAYES_SG_DATA)")
    ap.add_argument("--plot", help="PNG path (default: next to --markdown, same stem)")
    for name, kwargs in extra.items():
        ap.add_argument("--" + name.replace("_", "-"), **kwargs)
    args = ap.parse_args()
    if args.plot is None and args.markdown:
        args.plot = str(Path(args.markdown).with_suffix(".png"))
    return args


def header(title, args, *, seeds, repeats, note=""):
    """Markdown preamble every results table starts with: run mode, machine, seeds, repeats."""
    m = machine()
    hw = (f"{m['cpus']} CPUs ({m['machine']}, {m['processor']}), Python {m['python']}, numpy "
          f"{m['numpy']}, scipy {m['scipy']}, scikit-learn {m['scikit-learn']}, skbayes_sg "
          f"{m['skbayes_sg']}")
    lines = [f"## {title} ({'quick' if args.quick else 'full'} run)", "",
             f"Machine: {hw}. The machine was shared with other jobs during the run, so wall "
             "seconds are comparable only within this table. Load average (1, 5, 15 min) when "
             "the table was written: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()) + ".", "",
             f"Seeds: {seeds}; repeats: {repeats} (mean ± sd over repeats where shown).", "",
             f"Command: `python {shlex.join(sys.argv)}`", ""]
    if note:
        lines += [note, ""]
    return "\n".join(lines)


def mean_sd(values, fmt=".3g"):
    """``"mean ± sd"`` of ``values`` (sd with ddof=1; just the mean for one value)."""
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return format(float(v.mean()), fmt)
    return f"{format(float(v.mean()), fmt)} ± {format(float(v.std(ddof=1)), fmt)}"


def save_plot(fig_fn, path):
    """Call ``fig_fn(plt)`` (it draws and returns a figure) and save it as PNG at ``path``.

    Skipped with a message when ``path`` is None or matplotlib is missing.
    """
    if not path:
        return
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("[plot] matplotlib not installed (pip install skbayes_sg[plot]); plot skipped")
        return
    fig = fig_fn(plt)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"[plot] wrote {path}")
