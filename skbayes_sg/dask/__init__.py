"""Fit and predict on data that lives on a Dask cluster (the ``dask`` extra).

The estimators dispatch here -- importing this package only then -- when ``fit`` or a predict
method gets a dask array or DataFrame, so numpy-only users never import dask:

* :class:`DaskPosterior` -- the fit's posterior; every full-data pass is a blockwise map-reduce;
* :func:`dask_strategy` -- the subsampling strategies that run on dask data, built from the
  in-memory pieces; minibatch rows are gathered a piece of steps ahead (:class:`DaskIndex`);
* :func:`fit_data`, :func:`predict_blockwise` -- the estimators' validation and predictions.

``pip install "skbayes_sg[dask]"``; see ``docs/dask.md``.
"""

from ._estimators import fit_data, predict_blockwise
from ._gather import Batch, RowSource
from ._index import DaskIndex, WeightTargets
from ._posterior import DaskPosterior
from ._runner import Runner
from ._strategies import DASK_STRATEGIES, GATHER_BYTES, DaskStrategy, dask_strategy

__all__ = ["Batch", "DASK_STRATEGIES", "GATHER_BYTES", "DaskIndex", "DaskPosterior",
           "DaskStrategy", "Runner", "RowSource", "WeightTargets", "dask_strategy", "fit_data",
           "predict_blockwise"]
