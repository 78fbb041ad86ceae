"""Autocovariance, autocorrelation and integrated autocorrelation time of chains.

All estimates use the FFT of the mean-centred series, zero-padded to a power of two at
least twice its length so that the circular correlation equals the linear one, and
the biased normalisation ``1/n`` at every lag (the estimator that keeps the
autocovariance sequence positive semi-definite, as Geyer's ESS requires).
"""

import numpy as np

__all__ = ["autocorrelation", "autocovariance", "integrated_time", "mean_autocovariance"]


def _power(x):
    """``(|FFT|^2 of the centred series along the last axis, n, n_fft)``; ``n_fft`` is the
    power of two at or above ``2 n`` (no wrap-around of the circular correlation).

    numpy's FFT on C-contiguous rows (on these short series faster than scipy's), and
    ``series - mean`` of a moved axis keeps the strided layout, so the rows are made contiguous
    first.
    """
    n = x.shape[-1]
    centred = np.ascontiguousarray(x - x.mean(axis=-1, keepdims=True))
    n_fft = 1 << (2 * n - 1).bit_length()
    spec = np.fft.rfft(centred, n=n_fft, axis=-1)
    power = np.multiply(spec.real, spec.real)
    power += spec.imag * spec.imag
    return power, n, n_fft


def _from_power(power, n, n_fft):
    acov = np.fft.irfft(power, n=n_fft, axis=-1)[..., :n]
    acov /= n
    return acov


def autocovariance(x, axis=-1):
    """Autocovariance of a series at every lag, by zero-padded FFT.

    Parameters
    ----------
    x : array_like
        Draws; the series runs along ``axis``, other axes are batched.
    axis : int, default=-1
        Axis of the series (the draws axis).

    Returns
    -------
    acov : ndarray of float, same shape as ``x``
        ``acov[t] = (1/n) * sum_{i<n-t} (x_i - xbar)(x_{i+t} - xbar)`` along ``axis``.

    Notes
    -----
    The series is padded with zeros to a power of two at least ``2 n`` before the real
    FFT, so the wrap-around of the circular correlation never mixes lags.

    References
    ----------
    .. [1] Geyer, C. J. (1992). Practical Markov chain Monte Carlo.
       Statistical Science, 7(4), 473-483.
    """
    x = np.asarray(x, dtype=float)
    axis = axis % x.ndim
    acov = _from_power(*_power(np.moveaxis(x, axis, -1)))
    return np.moveaxis(acov, -1, axis)


def mean_autocovariance(x):
    """The chains' mean autocovariance ``(n, k)`` of draws ``x (m, n, k)``.

    Equal to ``autocovariance(x, axis=1).mean(axis=0)``: the inverse transform is linear, so the
    power spectra are averaged over the chains first and only ``k`` series are transformed back
    instead of ``m k``.
    """
    power, n, n_fft = _power(np.moveaxis(np.asarray(x, dtype=float), 1, -1))
    return _from_power(power.mean(axis=0), n, n_fft).T


def autocorrelation(x, axis=-1):
    """Normalised autocorrelation ``rho_t = acov_t / acov_0`` at every lag.

    Parameters
    ----------
    x, axis
        As in :func:`autocovariance`.

    Returns
    -------
    rho : ndarray of float, same shape as ``x``
        ``rho[0] = 1``. A constant series has no defined autocorrelation: its
        entries are NaN (returned silently, without a ``RuntimeWarning``).

    References
    ----------
    .. [1] Geyer, C. J. (1992). Practical Markov chain Monte Carlo.
       Statistical Science, 7(4), 473-483.
    """
    acov = autocovariance(x, axis=axis)
    lag0 = np.take(acov, [0], axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = acov / lag0
    return np.where(lag0 > 0, rho, np.nan)


def integrated_time(draws, c=5.0):
    """Integrated autocorrelation time with Sokal's automatic window.

    Parameters
    ----------
    draws : array_like of shape (n_draws,), (n_chains, n_draws) or \
            (n_chains, n_draws, n_params)
        Chains; the autocorrelation is averaged over chains, as emcee does.
    c : float, default=5.0
        Window constant: the window is the smallest ``M`` with ``M >= c tau(M)``.

    Returns
    -------
    tau : float or ndarray of shape (n_params,)
        ``tau = 1 + 2 sum_{t=1}^{M} rho_t``; NaN for a constant parameter. When
        no lag satisfies the window rule (chain too short) the longest window
        is used: such an estimate is a lower bound, so run longer chains.

    Notes
    -----
    ``n_draws / tau`` is the classical effective sample size of one chain
    (seed 000, Table 2: ``ESS = n / (1 + 2 sum_k rho_k)``). For convergence
    work prefer :func:`effective_sample_size`, which is multi-chain aware.

    References
    ----------
    .. [1] Sokal, A. (1997). Monte Carlo methods in statistical mechanics:
       foundations and new algorithms. In Functional Integration, 131-192.
    .. [2] Foreman-Mackey, D. et al. (2013). emcee: the MCMC hammer.
       PASP, 125(925), 306-312.
    """
    x = np.asarray(draws, dtype=float)
    scalar = x.ndim < 3
    x = x.reshape((1,) * (2 - min(x.ndim, 2)) + x.shape)
    x = x[..., None] if scalar else x
    if x.ndim != 3:
        raise ValueError(f"draws must have 1 to 3 dimensions, got shape {np.shape(draws)}.")
    if c <= 0:
        raise ValueError(f"c must be positive, got {c}.")
    rho = autocorrelation(x, axis=1).mean(axis=0)  # (n_draws, n_params)
    taus = 2.0 * np.cumsum(rho, axis=0) - 1.0
    ok = np.arange(rho.shape[0])[:, None] >= c * taus
    window = np.where(ok.any(axis=0), ok.argmax(axis=0), rho.shape[0] - 1)
    tau = np.take_along_axis(taus, window[None, :], axis=0)[0]
    return float(tau[0]) if scalar else tau
