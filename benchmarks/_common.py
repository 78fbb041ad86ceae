"""Shared benchmark helpers: data loading, machine description, JSON/Markdown output."""

import json
import os
import platform
import sys
from pathlib import Path

import numpy as np

__all__ = ["data_dir", "load_npz", "machine", "write_json", "write_markdown"]


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


def write_json(path, payload):
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(payload, indent=2, default=float))


def write_markdown(path, text):
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
