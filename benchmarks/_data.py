"""Benchmark data: the shared ``.npz`` sets, standardized, with fallbacks.

``load(name, data_dir)`` returns ``(X_train, y_train, X_test, y_test, task)``
with standardized features (and standardized target for regression).  The
directory comes from ``--data-dir`` or ``SKBAYES_SG_DATA``; without it,
scikit-learn's fetchers are tried (they need the internet) and otherwise a
clear error says where to put the files.
"""

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from _common import load_npz

__all__ = ["TASKS", "load"]

TASKS = {"pendigits": "classification", "letter": "classification", "a9a": "classification",
         "usps": "classification", "mnist": "classification", "w8a": "classification",
         "ijcnn1": "classification", "covtype_binary_subset20k": "classification",
         "casp": "regression", "cadata": "regression"}

_FETCHERS = {"cadata": "fetch_california_housing", "covtype_binary_subset20k": "fetch_covtype"}


def _fetch(name):
    import sklearn.datasets as ds

    fetcher = _FETCHERS.get(name)
    if fetcher is None:
        X, y = ds.fetch_openml(name, return_X_y=True, as_frame=False)
        return {"X": np.asarray(X, dtype=float), "y": np.asarray(y)}
    X, y = getattr(ds, fetcher)(return_X_y=True)
    return {"X": X, "y": y}


def _split(arrays):
    if "X_train" in arrays:
        return arrays["X_train"], arrays["y_train"], arrays["X_test"], arrays["y_test"]
    X = arrays.get("X_float64", arrays["X"])
    y = arrays.get("y_float64", arrays["y"])
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0)
    return Xtr, ytr, Xte, yte


def load(name, data_dir=None):
    """Standardized ``(X_train, y_train, X_test, y_test, task)`` of data set ``name``."""
    arrays = load_npz(name, data_dir)
    if arrays is None:
        try:
            arrays = _fetch(name)
        except Exception as exc:  # no internet, no data dir
            raise RuntimeError(
                f"Data set {name!r} not found: pass --data-dir or set SKBAYES_SG_DATA to a "
                f"folder with {name}.npz (see ../shared/datasets/README.md).") from exc
    Xtr, ytr, Xte, yte = _split(arrays)
    scaler = StandardScaler().fit(np.asarray(Xtr, dtype=float))
    Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    task = TASKS.get(name, "classification")
    if task == "regression":
        mu, sd = float(np.mean(ytr)), float(np.std(ytr))
        ytr, yte = (np.asarray(ytr, float) - mu) / sd, (np.asarray(yte, float) - mu) / sd
    return Xtr, ytr, Xte, yte, task
