"""Fit and predict on data that lives on a Dask cluster (the ``dask`` extra).

The estimators dispatch here -- importing this package only then -- when ``fit`` or a predict
method gets a dask array or DataFrame, so numpy-only users never import dask:

* :class:`DaskPosterior` -- the fit's posterior; every full-data pass is a blockwise map-reduce;
* :class:`DaskRows` -- its row source: what the subsampling strategies that run on dask data ask
  of the rows (gathers a piece of steps ahead, :class:`DaskIndex`; anchor responses evaluated
  with the gathered rows; preference weights kept on the workers);
* :func:`fit_data`, :func:`predict_blockwise` -- the estimators' validation and predictions.

``pip install "skbayes_sg[dask]"``; see ``docs/dask.md``.
"""

from ._estimators import fit_data, predict_blockwise
from ._gather import Batch, RowSource
from ._index import DaskIndex, WeightTargets
from ._posterior import DaskPosterior
from ._rows import GATHER_BYTES, CarriedResponses, DaskRows
from ._runner import Runner

__all__ = ["Batch", "CarriedResponses", "GATHER_BYTES", "DaskIndex", "DaskPosterior", "DaskRows",
           "Runner", "RowSource", "WeightTargets", "fit_data", "predict_blockwise"]
