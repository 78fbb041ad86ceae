"""The fused per-row terms of the GLMs: exact at every scale, float32 kept where it can be.

Oracles: scipy's ``log_expit`` / ``expit``, float64 terms, and the spacing of float32.
"""

import numpy as np

from skbayes_sg.models._fused import fused_predictor

from support.problems import toy_model


D = 3


def test_fused_predictor_has_no_systematic_rounding():
    # rounding the weights to float32 moves z_i by x_i . dw: in the gradient, X'X dw grows like N
    # (on 10^7 x 50 rows, a decrement error above Newton's tolerance), while the float32 rounding
    # of the products is random and grows like sqrt(N).  Splitting w = hi + lo removes the first.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100_000, 20)).astype(np.float32)
    w = rng.normal(size=20)
    X64 = X.astype(np.float64)
    z = X64 @ w + 0.3
    fused = fused_predictor(X, w, 0.3)
    rounded = (X @ w.astype(np.float32)).astype(np.float64) + 0.3
    err = [np.linalg.norm(X64.T @ (v - z)) for v in (fused, rounded)]
    assert err[0] < 0.25 * err[1]
    assert np.array_equal(fused_predictor(X64, w, 0.3), z)


def test_only_fused_binary_rows_round_the_position():
    import scipy.sparse as sp
    X32 = np.ones((3, D), dtype=np.float32)
    binary, softmax, linear = (toy_model(n) for n in ("binary", "softmax", "linear_fixed"))
    assert binary.evaluation_dtype(X32) == np.float32
    assert binary.evaluation_dtype(X32.astype(np.float64)) is None
    assert binary.evaluation_dtype(sp.csr_matrix(X32)) is None
    assert softmax.evaluation_dtype(X32) is None and linear.evaluation_dtype(X32) is None


def test_binary_logistic_terms_keep_float32():
    # float32 per-row terms (the fused pass on float32 rows) agree with float64 to float32
    # accuracy, stay float32, and take float64 targets
    from skbayes_sg.models._fused import binary_logistic_terms

    tz = np.random.default_rng(0).normal(0, 8, 2000)
    y = np.where(np.arange(tz.size) % 3 == 0, 1.0, -1.0)
    exact = binary_logistic_terms(tz.copy(), y)
    single = binary_logistic_terms(tz.astype(np.float32), y)
    for a, b in zip(single, exact):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6 * np.abs(b).max())


def test_binary_logistic_terms_are_exact_at_every_scale():
    # value, response and curvature of one exponential per row against scipy's log_expit /
    # expit, from |tz| = 0 to past exp's overflow (709) and underflow (745)
    from scipy.special import expit, log_expit

    from skbayes_sg.models._fused import binary_logistic_terms

    tz = np.r_[np.linspace(-900, 900, 361), np.random.default_rng(0).normal(0, 5, 500)]
    y = np.where(np.arange(tz.size) % 2 == 0, 1.0, -1.0)
    f, r, c = binary_logistic_terms(tz.copy(), y)
    np.testing.assert_allclose(f, -log_expit(tz), rtol=1e-13, atol=1e-300)  # 0 past 709
    np.testing.assert_allclose(r, -y * expit(-tz), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(c, expit(tz) * expit(-tz), rtol=0, atol=4e-16)  # s - s^2
    f2, r2, c2 = binary_logistic_terms(tz.copy(), y, value=False, hessian=False)
    assert f2 is None and c2 is None and np.array_equal(r2, r)
