"""Preferential subsampling: SGLD-PS and SGLD-CV-PS (seed 004 §3.1-3.2)."""

from numbers import Real

from sklearn.utils._param_validation import Interval

from ._base import CORRECTION_CONSTRAINT, IndexedStrategy, StrategyData
from ._rows import rows_of
from ._weighted import WeightedIndex, WeightTables, weight_tables, weighted_index

__all__ = ["Preferential", "PreferentialCV", "WeightTables", "WeightedIndex",
           "preference_weights", "weight_tables", "weighted_index"]


def preference_weights(posterior, laplace, correction, uniform_mix, rng, anchor=None):
    """``(p, n_grad_evals, anchor, outputs)``: the weights that suit ``correction``, kept where
    the rows live (:meth:`InMemoryRows.preference_weights`), and the control-variate anchor:
    ``anchor``, or where ``correction`` needs one and the rows and model allow it, from the
    weights' own pass (else None).

    A plain sum is best served by ``p_i ∝ ||∇f_i(theta_hat)||`` (eq. 11); a
    corrected one sums gradient differences ``≈ H_i (theta - theta_a)``, so
    by the curvature ``p_i ∝ sqrt(tr(H_i Σ H_i))`` (eq. 16).
    """
    kind = "curvature" if correction.uses_anchor else "gradient_norm"
    want = correction.uses_anchor and anchor is None and correction.at_mode
    p, evals, found, outputs = rows_of(posterior).preference_weights(laplace, kind, uniform_mix,
                                                                     rng, anchor=want)
    return p, evals, anchor if anchor is not None else found, {
        "preferential_weights": kind, "preferential_uniform_mix": uniform_mix, **outputs}


class Preferential(IndexedStrategy):
    """SGLD-PS: rows drawn with probability ∝ their gradient norm at the mode.

    Parameters
    ----------
    uniform_mix : float, default=0.1
        Share of the uniform distribution mixed into the weights, so that every row keeps
        probability at least ``uniform_mix / N`` (a zero probability would bias the estimate).
    correction : {"plain", "cv", "svrg"} or correction object, default="plain"
        ``"plain"``: eq. 8 below.  ``"cv"`` (eq. 12, as
        :class:`PreferentialCV`) and ``"svrg"`` sum gradient differences,
        so their weights follow the curvature (eq. 16) instead.
    shared_minibatch : bool, default=False
        Whether all chains use the same draws in a step (see :class:`Uniform`).

    Notes
    -----
    Weights ``p_i ∝ ||∇f_i(theta_hat)||`` (seed 004 eq. 11) mixed with uniform,
    ``B`` of size ``b`` drawn with replacement from ``p``, and (eq. 8)::

        g = ∇f_0(theta) + (1/b) sum_{i in B} ∇f_i(theta) / p_i

    Unbiased.  Preprocessing: the mode and one pass of gradients (closed form for GLMs).  ``b``
    gradient evaluations per step.  At ``b >= N`` every row is used once instead (the exact sum,
    same cost, no noise).  ``preprocessing_`` gets ``subsampling_weights`` ``(n_samples,)``,
    ``preferential_weights`` (which kind), ``preferential_uniform_mix`` and
    ``preferential_max_weight_ratio`` (``N max_i p_i``).

    References
    ----------
    Putcha, S., Nemeth, C. and Fearnhead, P. (2023). Preferential subsampling
    for stochastic gradient Langevin dynamics. AISTATS.
    """

    name = "preferential"

    def __init__(self, uniform_mix=0.1, correction="plain", shared_minibatch=False):
        self.uniform_mix = uniform_mix
        self.correction = correction
        self.shared_minibatch = shared_minibatch

    _parameter_constraints = {"uniform_mix": [Interval(Real, 0, 1, closed="right")],
                              "correction": CORRECTION_CONSTRAINT,
                              "shared_minibatch": ["boolean"]}

    def preprocess(self, posterior, laplace, *, rng, anchor=None):
        """The weights and their sampling tables, and the correction's data (control variates:
        the anchor from the weights' pass where it computes one)."""
        correction, mix = self._correction(), float(self.uniform_mix)
        p, evals, anchor, outputs = preference_weights(posterior, laplace, correction, mix, rng,
                                                       anchor)
        terms, more = correction.preprocess(posterior, laplace, anchor)
        return StrategyData(posterior, laplace, terms=terms,
                            index=rows_of(posterior).weight_table(p), n_grad_evals=evals + more,
                            outputs=outputs)

    def estimator(self, data, *, batch_size):
        table = data.index
        return self._estimator(data, rows_of(data.posterior).weighted_index(table, batch_size))


class PreferentialCV(Preferential):
    """SGLD-CV-PS: control variates at the mode with curvature-based weights.

    Parameters
    ----------
    uniform_mix : float, default=0.1
        Share of the uniform distribution mixed into the weights (floor).
    shared_minibatch : bool, default=False
        Whether all chains use the same draws in a step (see :class:`Uniform`).

    Notes
    -----
    Weights ``p_i ∝ sqrt(tr(H_i Σ H_i))`` (seed 004 eq. 16; ``H_i`` the
    Hessian of ``f_i`` at the mode, ``Σ`` the Laplace covariance; GLMs in
    closed form, other models by Monte Carlo over Laplace draws, see
    :func:`skbayes_sg.preprocessing.curvature_weights`), mixed with uniform;
    ``B`` drawn with replacement from ``p``, and (eq. 12)::

        g = ∇f_0(theta) + G + (1/b) sum_{i in B} [∇f_i(theta) - ∇f_i(theta_hat)] / p_i

    with ``G = sum_i ∇f_i(theta_hat)``.  Unbiased.  Cost per step as ``control_variates``: ``b``
    evaluations for GLMs (anchor responses stored as scalars), ``2 b`` otherwise.  At ``b >= N``
    every row is used once instead (the exact gradient at the same cost).  The preset
    ``Preferential(correction="cv")``.

    References
    ----------
    Putcha, S., Nemeth, C. and Fearnhead, P. (2023). Preferential subsampling
    for stochastic gradient Langevin dynamics. AISTATS.
    """

    name = "preferential_cv"
    correction = "cv"

    def __init__(self, uniform_mix=0.1, shared_minibatch=False):
        self.uniform_mix = uniform_mix
        self.shared_minibatch = shared_minibatch
