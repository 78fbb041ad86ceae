"""Subsampling strategies: hyperparameter holders that build gradient estimators.

A *strategy* (``Uniform()``, ``Stratified(n_clusters=20)``, ...) only stores hyperparameters
(``get_params``/``set_params``); ``validate()`` checks them before any pass over the data.  In
``fit`` it works in two steps:

* ``strategy.preprocess(posterior, laplace, rng=..., anchor=...)`` does the heavy preprocessing
  once and returns a :class:`StrategyData` record: everything that does not depend on the batch
  size (strata, weights and their sampling tables, the control-variate anchor);
* ``strategy.estimator(data, batch_size=...)`` is cheap, and returns a fully built gradient
  estimator (:mod:`~skbayes_sg.subsampling._estimator`); ``batch_size="auto"`` calls it at each
  batch it tries.

``strategy.build(posterior, laplace, batch_size=..., rng=...)`` does both at once.  An estimator
is composed of two orthogonal pieces:

* an *index sampler* -- WHERE to look (uniform, stratified, preferential,
  adaptive size, all rows; :mod:`~skbayes_sg.subsampling._index`);
* a *correction* -- HOW to turn the minibatch into ``g ≈ ∇U``: ``"plain"``, ``"cv"`` (control
  variates at the mode) or ``"svrg"`` (refreshed anchors), or a correction object.  Strategies with
  a non-uniform index take any of them as their ``correction`` parameter.
"""

from dataclasses import dataclass, field
from types import MappingProxyType

import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions

from ..preprocessing import Anchor
from ..utils import ParamsMixin
from ._corrections import BaseCorrection, ControlVariate, PlainCorrection
from ._estimator import GradientEstimator
from ._index import BlockIndex
from ._rows import rows_of
from ._svrg import SVRGAnchor

__all__ = ["CORRECTIONS", "CORRECTION_CONSTRAINT", "SPARSE_ALTERNATIVES", "BaseStrategy",
           "IndexedStrategy", "StrategyData", "check_dense", "resolve_correction"]

SPARSE_ALTERNATIVES = ("use subsampling='auto' (default), 'preferential_cv' or 'control_variates' "
                       "with sparse X")


def check_dense(X):
    """Raise a ValueError naming the alternatives if ``X`` is sparse (for strategies that cluster
    the rows)."""
    if sp.issparse(X):
        raise ValueError("subsampling='stratified'/'compressed' need dense X (they cluster the "
                         f"rows); {SPARSE_ALTERNATIVES}.")

CORRECTIONS = MappingProxyType({"plain": PlainCorrection, "cv": ControlVariate,
                                "svrg": SVRGAnchor})
CORRECTION_CONSTRAINT = (StrOptions(set(CORRECTIONS)), BaseCorrection)

# benchmarks/results/bench_shared.md: uniform minibatches shared by 4 chains on the exact linear posterior
_SHARED_PLAIN = (
    "shared_minibatch=True with plain minibatch sums: the chains are not independent\n"
    "(their noise is common), so R-hat and ESS overstate the information (ESS ~1.7x in "
    "bench_shared).\n"
    "Use control variates (correction='cv', ControlVariates, PreferentialCV) or "
    "shared_minibatch=False.")


@dataclass(frozen=True, eq=False)
class StrategyData:
    """What a strategy's preprocessing produced (batch-size independent), for its estimators.

    ``terms`` is the correction's data (control variates: the
    :class:`~skbayes_sg.preprocessing.Anchor`), ``index`` the index sampler's (weights and
    tables, strata, ...); ``n_grad_evals`` is the preprocessing's cost, ``outputs`` what goes to
    ``preprocessing_`` and ``warnings`` what ``fit`` emits as ``ApproximationWarning``.
    """

    posterior: object
    laplace: object
    terms: object = None
    index: object = None
    n_grad_evals: int = 0
    outputs: dict = field(default_factory=dict)
    warnings: tuple = ()

    @property
    def anchor(self):
        """The control-variate anchor of this preprocessing, or None."""
        return self.terms if isinstance(self.terms, Anchor) else None

    def estimator_kwargs(self):
        """Keywords of the estimators: the cost, outputs and warnings recorded here."""
        return {"outputs": dict(self.outputs), "preprocessing_evals": self.n_grad_evals,
                "warnings": self.warnings}


def resolve_correction(value):
    """The correction object for a name in :data:`CORRECTIONS` or an object."""
    return value if isinstance(value, BaseCorrection) else CORRECTIONS[value]()


class BaseStrategy(ParamsMixin):
    """Base class of the subsampling strategies.

    ``name`` is the string shortcut and ``exact`` says whether the estimator gives the exact
    gradient (the only kind HMC accepts); ``n_candidates`` how many candidate gradients a step
    offers the sampler to pick among (EWSG; above 1 only samplers with ``couples_index`` can);
    ``supports_sparse`` whether ``build`` accepts sparse ``X`` (:meth:`check_data` raises before
    any pass over the data if not); ``needs_rows`` what it needs of the row source beyond
    gathers (:mod:`~skbayes_sg.subsampling._rows`: ``"whole"``, ``"per_step"``), which
    :meth:`row_needs` completes.
    """

    name = None
    exact = False
    supports_sparse = True
    needs_rows = frozenset()

    def check_data(self, X):
        """Raise a ValueError if this strategy cannot use ``X`` (sparse without support)."""
        if not self.supports_sparse:
            check_dense(X)

    def preprocess(self, posterior, laplace, *, rng, anchor=None):
        """The preprocessing, once per fit: a :class:`StrategyData` record.

        Parameters
        ----------
        posterior : Posterior
        laplace : Laplace
            Mode and covariance of the posterior (of the full data).
        rng : Generator
            Randomness of the preprocessing.
        anchor : Anchor, optional
            The control-variate anchor at ``laplace.mode`` if already computed (the mode
            search's last pass); strategies without control variates ignore it.
        """
        return StrategyData(posterior, laplace)

    def estimator(self, data, *, batch_size):
        """The gradient estimator on ``data`` (from :meth:`preprocess`) for minibatches of
        ``batch_size`` rows (at most ``max_batch_size(posterior.n_rows)``)."""
        raise NotImplementedError

    def build(self, posterior, laplace, *, batch_size, rng, anchor=None):
        """:meth:`preprocess`, then :meth:`estimator`: a gradient estimator in one call."""
        data = self.preprocess(posterior, laplace, rng=rng, anchor=anchor)
        return self.estimator(data, batch_size=batch_size)

    def row_needs(self):
        """What this strategy, as parameterised, needs of the row source (a frozenset of
        capabilities, :mod:`~skbayes_sg.subsampling._rows`)."""
        return self.needs_rows

    def max_batch_size(self, n_rows):
        """Largest minibatch ``batch_size="auto"`` may give this strategy (default ``n_rows``)."""
        return n_rows

    @property
    def n_candidates(self):
        """Candidate minibatch gradients per step the sampler chooses among (EWSG), else 1."""
        return 1

    @property
    def anchors_at_mode(self):
        """Whether the build uses control variates anchored at the mode (then the mode search
        computes their anchor on its last pass, :func:`~skbayes_sg.preprocessing.find_mode`)."""
        return False


class IndexedStrategy(BaseStrategy):
    """A strategy made of an index sampler and a correction.

    ``correction`` is a constructor parameter of the strategies that accept
    any correction, and a class attribute of the presets; so is ``shared_minibatch``
    (:class:`~skbayes_sg.subsampling.Uniform` documents it) where one minibatch can serve every
    chain: not for per-chain sizes (``adaptive``), per-chain anchors (``svrg``) or candidates
    (``ewsg``).
    """

    correction = "plain"
    shared_minibatch = False

    def _correction(self):
        return resolve_correction(self.correction)

    @property
    def anchors_at_mode(self):
        return self._correction().at_mode

    def validate(self):
        super().validate()
        correction = self._correction()
        correction.validate()
        if self.shared_minibatch and correction.name == "svrg":
            raise ValueError(
                f"{type(self).__name__}(shared_minibatch=True) with the 'svrg' correction: its "
                "anchors are refreshed on each chain's own rows, so the chains cannot share "
                "minibatches. Use correction='cv' or 'plain', or shared_minibatch=False.")

    def max_batch_size(self, n_rows):
        return self._correction().max_batch_size(n_rows)

    def row_needs(self):
        """The index's needs, the correction's, and ``"shared"`` with ``shared_minibatch``."""
        shared = frozenset({"shared"}) if self.shared_minibatch else frozenset()
        return self.needs_rows | self._correction().needs_rows | shared

    def preprocess(self, posterior, laplace, *, rng, anchor=None):
        """The correction's data (control variates: their anchor, ``anchor`` if given)."""
        terms, evals = self._correction().preprocess(posterior, laplace, anchor)
        return StrategyData(posterior, laplace, terms=terms, n_grad_evals=evals)

    def _estimator(self, data, index, **kwargs):
        """The estimator of ``index`` with this strategy's correction on ``data`` (its chains
        sharing each minibatch with ``shared_minibatch``; all rows every step need no
        sharing)."""
        correction = self._correction()
        shared = bool(self.shared_minibatch) and isinstance(index, BlockIndex)
        if shared:
            index.shared = True
        terms = correction.build(data.posterior, data.laplace, batch_size=index.b,
                                 data=data.terms)
        index = rows_of(data.posterior).gather(index, terms.responses_at)
        options = {**data.estimator_kwargs(), **kwargs}
        if shared and not correction.uses_anchor:
            options["warnings"] = (*options["warnings"], _SHARED_PLAIN)
        return GradientEstimator(data.posterior, index, terms, **options)
