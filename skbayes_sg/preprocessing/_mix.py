"""Preference weights from scores: multiplicities, the uniform mix, the normalisation.

:func:`scores_to_weights` turns the scores of :func:`~skbayes_sg.preprocessing.row_scores` into
sampling probabilities in place; :func:`clean_scores` and :func:`mix_scores` are its steps, for
rows held in chunks elsewhere (dask mixes chunk by chunk with the total of all rows).
"""

import numpy as np

__all__ = ["clean_scores", "mix_scores", "mix_uniform", "scores_to_weights"]


def mix_uniform(scores, multiplicity=None, uniform_mix=0.1):
    """Probabilities ``p_i = (1 - a) s_i / sum(s) + a m_i / sum(m)``.

    Mixing with the uniform distribution over the data points (``m_i`` the row multiplicities, 1 by
    default) floors every ``p_i`` at ``a m_i / N > 0``: a zero weight would bias the estimator
    (methods.md §5).  Non-finite or negative scores count as 0; all-zero scores give uniform.
    """
    return _mix_into(np.array(scores, dtype=np.float64), multiplicity, uniform_mix)


def _mix_into(s, multiplicity, uniform_mix):
    """:func:`mix_uniform` written into the float64 scores ``s``.

    One array of ``N`` floats in all (a fresh one costs its page faults, which on large data
    outweigh the arithmetic).
    """
    if not 0.0 < uniform_mix <= 1.0:
        raise ValueError(f"uniform_mix must be in (0, 1], got {uniform_mix!r}.")
    clean_scores(s)
    total = s.sum()
    if not (np.isfinite(total) and total > 0):
        s[:] = 1.0 if multiplicity is None else multiplicity
        s /= s.sum()
        return s
    mix_scores(s, total, uniform_mix, s.shape[0], multiplicity)
    s /= s.sum()
    return s


def clean_scores(s):
    """Non-finite or negative scores of ``s`` set to 0, in place; ``s``."""
    s[~(np.isfinite(s) & (s > 0))] = 0.0
    return s


def mix_scores(s, total, uniform_mix, n_rows, multiplicity=None):
    """``s (1 - a) / total + a m / sum(m)`` in place (``m`` all ones: ``a / n_rows``); ``s``.

    The mix before the last normalisation, for scores ``s`` that may be one chunk of the rows
    (``total`` their sum over all rows): rows elsewhere (dask) mix chunk by chunk.
    """
    s *= (1.0 - uniform_mix) / total
    if multiplicity is None:
        s += uniform_mix / n_rows
    else:
        m = np.asarray(multiplicity, dtype=np.float64)
        s += (uniform_mix / m.sum()) * m
    return s


def scores_to_weights(posterior, scores, uniform_mix):
    """The probabilities of fresh float64 ``scores`` (overwritten) of ``posterior``'s rows:
    times the multiplicities, then :func:`mix_uniform`."""
    if posterior.weight is not None:
        scores *= posterior.weight
    return _mix_into(scores, posterior.weight, uniform_mix)
