"""Benchmark data: the shared ``.npz`` sets, standardized, with fallbacks.

``load(name, data_dir)`` returns ``(X_train, y_train, X_test, y_test, task)``
with standardized features (and standardized target for regression).
Binary 0/1 indicator columns (a9a, w8a, covtype's soil and wilderness types)
are left as 0/1: standardizing a rare indicator turns its few ones into
values of 50-180, which makes the posterior strongly non-Gaussian in those
directions and the minibatch gradient noise huge (the fits then warn and
their chains barely move).  The
directory comes from ``--data-dir`` or ``SKBAYES_SG_DATA``; without it,
scikit-learn's fetchers are tried (they need the internet) and otherwise a
clear error says where to put the files.
"""

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from _common import load_npz

__all__ = ["TASKS", "load", "mnist_pixels"]

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


_BINARY = {"a9a", "w8a", "ijcnn1", "covtype_binary_subset20k"}


def _bundled(name):
    """A data set shipped with scikit-learn standing in for ``name`` (``--quick`` only)."""
    import sklearn.datasets as ds

    task = TASKS.get(name, "classification")
    loader = (ds.load_diabetes if task == "regression" else
              ds.load_breast_cancer if name in _BINARY else ds.load_digits)
    X, y = loader(return_X_y=True)
    print(f"[data] {name}.npz not found; --quick uses scikit-learn's bundled "
          f"{loader.__name__[5:]} instead", flush=True)
    return {"X": X, "y": y}


def _cap(Xtr, ytr, Xte, yte, max_rows):
    """The first ``max_rows`` training rows (and a quarter as many test rows)."""
    if max_rows is None:
        return Xtr, ytr, Xte, yte
    n_test = max(max_rows // 4, 1)
    return Xtr[:max_rows], ytr[:max_rows], Xte[:n_test], yte[:n_test]


def _standardize(Xtr, Xte):
    """Standardize the non-binary columns (fitted on the training rows)."""
    Xtr, Xte = np.array(Xtr, dtype=float), np.array(Xte, dtype=float)
    binary = np.all((Xtr == 0) | (Xtr == 1), axis=0)
    if (~binary).any():
        scaler = StandardScaler().fit(Xtr[:, ~binary])
        Xtr[:, ~binary] = scaler.transform(Xtr[:, ~binary])
        Xte[:, ~binary] = scaler.transform(Xte[:, ~binary])
    return Xtr, Xte


def load(name, data_dir=None, *, quick=False, max_rows=None):
    """Standardized ``(X_train, y_train, X_test, y_test, task)`` of data set ``name``.

    Non-binary columns are standardized; 0/1 indicator columns stay 0/1.

    With ``quick=True`` a missing file is replaced by a scikit-learn bundled
    set of the same task (so smoke runs never need the data directory), and
    ``max_rows`` caps the training rows.
    """
    arrays = load_npz(name, data_dir)
    if arrays is None and quick:
        arrays = _bundled(name)
    if arrays is None:
        try:
            arrays = _fetch(name)
        except Exception as exc:  # no internet, no data dir
            raise RuntimeError(
                f"Data set {name!r} not found: pass --data-dir or set SKBAYES_SG_DATA to a "
                f"folder with {name}.npz (see ../shared/datasets/README.md).") from exc
    Xtr, ytr, Xte, yte = _cap(*_split(arrays), max_rows)
    Xtr, Xte = _standardize(Xtr, Xte)
    task = TASKS.get(name, "classification")
    if task == "regression":
        mu, sd = float(np.mean(ytr)), float(np.std(ytr))
        ytr, yte = (np.asarray(ytr, float) - mu) / sd, (np.asarray(yte, float) - mu) / sd
    return Xtr, ytr, Xte, yte, task


def mnist_pixels(n_train, n_test, data_dir=None, dtype=np.float64):
    """MNIST's first rows as pixels / 255: ``(X, y, X_test, y_test, found)``.

    Without ``mnist.npz``, uniform noise of the same shape stands in (``found`` is False) so
    that timing runs still work; their accuracy figures then mean nothing.
    """
    data = load_npz("mnist", data_dir)
    if data is None:
        rng = np.random.default_rng(0)
        n = n_train + n_test
        X, y = rng.random((n, 784), dtype=dtype), rng.integers(0, 10, n)
        return X[:n_train], y[:n_train], X[n_train:], y[n_train:], False

    def pixels(key, n):
        return (data[key][:n].reshape(-1, 784) / 255.0).astype(dtype)

    return (pixels("X_train", n_train), data["y_train"][:n_train], pixels("X_test", n_test),
            data["y_test"][:n_test], True)
