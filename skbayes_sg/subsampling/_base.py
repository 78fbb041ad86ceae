"""Subsampling strategies: hyperparameter holders that build gradient estimators.

A *strategy* (``Uniform()``, ``Stratified(n_clusters=20)``, ...) only stores hyperparameters
(``get_params``/``set_params``); ``validate()`` checks them before any pass over the data.  In
``fit``, ``strategy.build(posterior, laplace, batch_size=..., rng=...)`` does all the heavy
preprocessing once and returns a fully built estimator (:mod:`~skbayes_sg.subsampling._estimator`),
composed of two orthogonal pieces:

* an *index sampler* -- WHERE to look (uniform, stratified, preferential,
  adaptive size, all rows; :mod:`~skbayes_sg.subsampling._index`);
* a *correction* -- HOW to turn the minibatch into ``g ≈ ∇U``: ``"plain"``, ``"cv"`` (control
  variates at the mode) or ``"svrg"`` (refreshed anchors), or a correction object.  Strategies with
  a non-uniform index take any of them as their ``correction`` parameter.
"""

import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions

from ..utils import ParamsMixin
from ._corrections import BaseCorrection, ControlVariate, PlainCorrection
from ._estimator import GradientEstimator
from ._index import BlockIndex
from ._svrg import SVRGAnchor

__all__ = ["CORRECTIONS", "CORRECTION_CONSTRAINT", "SPARSE_ALTERNATIVES", "BaseStrategy",
           "IndexedStrategy", "check_dense", "resolve_correction"]

SPARSE_ALTERNATIVES = ("use subsampling='auto' (default), 'preferential_cv' or 'control_variates' "
                       "with sparse X")


def check_dense(X):
    """Raise a ValueError naming the alternatives if ``X`` is sparse (for strategies that cluster
    the rows)."""
    if sp.issparse(X):
        raise ValueError("subsampling='stratified'/'compressed' need dense X (they cluster the "
                         f"rows); {SPARSE_ALTERNATIVES}.")

CORRECTIONS = {"plain": PlainCorrection, "cv": ControlVariate, "svrg": SVRGAnchor}
CORRECTION_CONSTRAINT = [StrOptions(set(CORRECTIONS)), BaseCorrection]

# benchmarks/bench_shared.md: uniform minibatches shared by 4 chains on the exact linear posterior
_SHARED_PLAIN = (
    "shared_minibatch=True with plain minibatch sums: the chains' gradient noise is mostly "
    "common to them, so they are not independent and R-hat and the effective sample size, which "
    "assume independent chains, overstate the information (draws of different chains "
    "correlated 0.35 and the ESS was about 1.7x too large in benchmarks/bench_shared.md). Use "
    "control variates (correction='cv', ControlVariates, PreferentialCV), with which no "
    "dependence was measurable, or shared_minibatch=False.")


def resolve_correction(value):
    """The correction object for a name in :data:`CORRECTIONS` or an object."""
    return value if isinstance(value, BaseCorrection) else CORRECTIONS[value]()


class BaseStrategy(ParamsMixin):
    """Base class of the subsampling strategies.

    ``name`` is the string shortcut and ``exact`` says whether the estimator gives the exact
    gradient (the only kind HMC accepts); ``candidate_gradients`` whether it gives candidate
    gradients for the sampler to pick among (EWSG; only samplers with ``couples_index`` can);
    ``supports_sparse`` whether ``build`` accepts sparse ``X`` (:meth:`check_data` raises before
    any pass over the data if not).
    """

    name = None
    exact = False
    candidate_gradients = False
    supports_sparse = True

    def check_data(self, X):
        """Raise a ValueError if this strategy cannot use ``X`` (sparse without support)."""
        if not self.supports_sparse:
            check_dense(X)

    def build(self, posterior, laplace, *, batch_size, rng):
        """Preprocess once and return the gradient estimator.

        Parameters
        ----------
        posterior : Posterior
        laplace : Laplace
            Mode and covariance of the posterior (of the full data).
        batch_size : int
            Minibatch size, at most ``max_batch_size(posterior.n_rows)``.
        rng : Generator
            Randomness of the preprocessing.
        """
        raise NotImplementedError

    def max_batch_size(self, n_rows):
        """Largest minibatch ``batch_size="auto"`` may give this strategy (default ``n_rows``)."""
        return n_rows

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

    def _estimator(self, posterior, laplace, index, **kwargs):
        """The estimator of ``index`` with this strategy's correction (its chains sharing each
        minibatch with ``shared_minibatch``; all rows every step need no sharing)."""
        correction = self._correction()
        shared = bool(self.shared_minibatch) and isinstance(index, BlockIndex)
        if shared:
            index.shared = True
        terms = correction.build(posterior, laplace, batch_size=index.b)
        est = GradientEstimator(posterior, index, terms, **kwargs)
        if shared and not correction.uses_anchor:
            est.warnings.append(_SHARED_PLAIN)
        return est
