"""The model protocol shared by every likelihood, and the Gaussian prior.

Conventions (every model follows them; the layers above rely on them):

* ``theta`` is 2-D ``(C, p)``: one row per chain (or per position).  A single
  position is passed as ``theta[None]``.
* Data ``X`` is either shared by all rows of ``theta`` -- shape ``(b, d)`` --
  or gathered per chain -- shape ``(C, b, d)`` (independent minibatches of
  several chains).  ``y`` is ``(b,)`` or ``(C, b)`` to match; ``weight``
  (optional) has the shape of ``y``.  ``X`` may be float32 or float64.  The GLMs
  (linear, logistic) also take a CSR matrix ``(b, d)`` as shared ``X`` and
  :class:`~skbayes_sg.models._sparse.ChainRows` as gathered ``X``
  (``Posterior.rows`` gathers either kind); ``per_example_grad`` then returns CSR.
* Precision: models compute in float64, except when both ``theta`` and a dense ``X`` are float32
  (the sampler's minibatch path on float32 data, :func:`as_compute`); results then come out in
  float32.  Full-data passes give float64 ``theta`` and so stay in float64.
* Targets are pre-encoded by the estimator: binary logistic ``y`` in
  {-1., +1.}; softmax ``y`` integer class codes 0..K-1; regression ``y`` float.
* ``f_i(theta) = -log p(y_i | x_i, theta)``; everything returned is about the
  negative log-likelihood (the potential), never the log-density.

Methods of a model (all pure, no RNG, no state):

``n_params``                          int attribute, length p of theta.
``param_shapes()``                    dict name -> shape, in pack order.
``unpack(theta)``                     ``(..., p)`` -> dict name -> ``(..., *shape)``.
``prior_precision(prior_scale)``      ``(p,)`` diagonal Gaussian prior precision.
``nll(theta, X, y)``                  ``(C, b)`` per-example f_i.
``grad_sum(theta, X, y, weight)``     ``(C, p)``: sum_i w_i grad f_i, never ``(C, b, p)``.
``per_example_grad(theta1, X, y)``    ``(b, p)`` for one position ``theta1 (p,)``.
``hessian(theta1, X, y, weight)``     ``(p, p)`` sum_i w_i grad^2 f_i (GLMs; the MLP raises).
``hessian_diag(theta1, X, y, weight)`` ``(p,)`` exact for GLMs, Gauss-Newton for the MLP.
``hessian_vector(theta1, X, y, V, weight)`` ``(l, p)``: rows ``sum_i w_i grad^2 f_i v`` (GLMs).
``newton_terms(theta1, X, y, weight, hessian, value)`` ``(value, grad, Hessian)`` (or None)
                                      of a chunk in one read (mode search, Laplace).
``start(X, y, weight)``               ``(p,)`` where the mode search starts.
``predict_output(draws, X)``          ``(S, n, K)`` probabilities (classifiers) or
                                      ``(S, n)`` means (regression), for draws ``(S, p)``.

Capabilities are declared, never probed: ``is_glm`` (the linear-predictor
form below), ``exact_hessian`` (``hessian`` is implemented) and
``random_init`` (the mode search starts from ``init_position(rng)``: the MLP),
``multimodal`` (the posterior has many modes, so chains start in different ones and no measure
taken at one mode stands for the others: the MLP), ``softmax`` (a GLM with one linear predictor
per class), ``is_regression`` and ``n_outputs`` (classes, or 1 for regression).

GLMs (``is_glm = True``) also expose the linear-predictor form used by control variates to store
the anchor as scalars (one gradient evaluation per example per step instead of two):

``response(theta, X, y)``             ``(C, b)`` or ``(C, b, K)``: d f_i / d z_i.
``grad_from_response(r, X, weight)``  ``(C, p)``: sum_i w_i r_i (x) [x_i, 1].
"""

import numpy as np

from ._arrays import as_float64

__all__ = ["Likelihood"]


class Likelihood:
    """Declared capabilities of a model (defaults; each model overrides what it has).

    ``is_glm``: the linear-predictor form (``response``, ``grad_from_response``);
    ``exact_hessian``: ``hessian`` is implemented; ``random_init``: the mode
    search starts from ``init_position(rng)``; ``multimodal``: chains start in different modes
    and the noise and curvature measured at one mode do not stand for the others;
    ``is_regression``: real targets; ``log_concave``: the likelihood is log-concave in
    ``theta`` (with the library's Gaussian priors, so is the posterior);
    ``linear_predictors``: linear predictors per row of a GLM (the rank of one row's Hessian);
    ``indefinite_hessian``: the Hessian can be indefinite away from a mode and jump where a
    ReLU unit crosses zero (the networks: their curvature is measured with care).
    """

    is_glm = False
    linear_predictors = 1
    exact_hessian = False
    random_init = False
    multimodal = False
    log_concave = False
    softmax = False
    is_regression = False
    indefinite_hessian = False
    feature_axes = {}  # parameter group -> axis of its shape that runs over the features

    def hessian_vector(self, theta1, X, y, V, weight=None):
        """Likelihood Hessian times vectors: ``sum_i w_i ∇²f_i v`` for the rows ``v`` of ``V``.

        GLMs only: ``∇²f_i = x~_i x~_i^T c_i`` (``c_i = d^2 f_i / d z_i^2``), so the product is
        ``sum_i w_i c_i (x~_i . v) x~_i``: the directional linear predictors ``x~_i . v`` (those of
        ``theta = v``), times the curvature, summed as a gradient.  ``O(l nnz)``, no ``p x p``.

        Parameters
        ----------
        theta1 : ndarray of shape (p,)
        X, y, weight
            Rows (dense or sparse), targets and optional weights.
        V : ndarray of shape (l, p)

        Returns
        -------
        HV : ndarray of shape (l, p)
        """
        c = self.curvature(theta1, X, y)
        return self.grad_from_response(self._curvature_times(c, self._z(V, X)), X, weight)

    @staticmethod
    def _curvature_times(c, zv):
        """``d^2 f_i / d z_i^2`` applied to directions ``zv`` (scalar curvature)."""
        return zv * c

    def start(self, X, y, weight=None):
        """Where the mode search starts ``(p,)``: zeros, unless the model knows better.

        Models whose targets have a location or scale of their own start there (the offsets and
        scales of ``y``), so that Newton's first Hessian is not far from positive definite.
        """
        return np.zeros(self.n_params)

    def evaluation_dtype(self, X):
        """The precision :meth:`newton_terms` rounds its position to on rows like ``X``, or None.

        None (this version): the position is used as given.  A model whose fused passes compute
        the linear predictor in ``X``'s precision returns that dtype: its passes evaluate the
        position rounded to it (the mode search iterates on those points, see
        :func:`~skbayes_sg.preprocessing._newton.newton_mode`).
        """
        return None

    def newton_terms(self, theta1, X, y, weight=None, hessian=True, value=True,
                     response_out=None):
        """``(sum_i w_i f_i or None, sum_i w_i ∇f_i (p,), sum_i w_i ∇²f_i (p, p) or None)``.

        One chunk of a full-data pass of the mode search at one position ``theta1``: the value
        (if ``value``), the gradient and (if ``hessian``) the exact Hessian, without the prior.
        A GLM given ``response_out`` (``(n,)`` or ``(n, K)``) also writes the rows' responses
        ``r_i`` there: what control variates store at their anchor (:meth:`anchor_terms`).
        This generic version calls ``nll``, ``grad_sum`` and ``hessian`` in float64; the scalar
        GLMs fuse them in ``X``'s precision (:mod:`skbayes_sg.models._fused`).
        """
        X, theta = as_float64(X), np.asarray(theta1, dtype=np.float64)[None]
        f = self.nll(theta, X, y)[0] if value else None
        total = None if f is None else float(f.sum() if weight is None else f @ weight)
        if response_out is None:
            grad = self.grad_sum(theta, X, y, weight)[0]
        else:
            response_out[...] = r = self.response(theta, X, y)[0]
            grad = self.grad_from_response(r[None], X, weight)[0]
        return total, grad, (self.hessian(theta1, X, y, weight) if hessian else None)

    def anchor_terms(self, theta1, X, y, weight=None, curvature=False):
        """``(sum_i w_i ∇f_i (p,), r_i[, c_i])`` of a chunk at one position ``theta1 (p,)`` (GLMs).

        The gradient of the rows and their responses ``r_i = d f_i / d z_i`` (``(n,)``, or
        ``(n, K)`` for softmax): what control variates store at their anchor; with
        ``curvature`` also :meth:`curvature` (what the curvature weights need at the same
        point).  This generic version runs in float64; the scalar GLMs fuse it in ``X``'s
        precision like :meth:`newton_terms`.
        """
        X, theta = as_float64(X), np.asarray(theta1, dtype=np.float64)[None]
        r = self.response(theta, X, y)
        g = self.grad_from_response(r, X, weight)[0]
        return (g, r[0], self.curvature(theta1, X, y)) if curvature else (g, r[0])

    def value_and_grad_sum(self, theta, X, y, weight=None):
        """``(sum_i w_i f_i (C,), sum_i w_i ∇f_i (C, p))`` of float64 rows (a model that can
        share work between the two overrides this)."""
        f = self.nll(theta, X, y)
        return (f.sum(axis=1) if weight is None else f @ weight), self.grad_sum(theta, X, y, weight)

    def predict_mean(self, draws, X):
        """The mean of ``predict_output(draws, X)`` over the draws: ``(n, K)`` or ``(n,)``."""
        return self.predict_output(draws, X).mean(axis=0)
