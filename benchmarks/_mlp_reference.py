"""Full-batch NUTS references for the Bayesian MLPs of ``bench_mlp_reference.py``.

A :class:`RefProblem` is a data split, a network (``hidden``, ``activation``) and a prior given
per layer (``PRIORS``: ``"library"`` is the library's prior at ``prior_scale``, ``"fanin"``
scales each layer's weight sd by ``1 / sqrt(fan_in)``).  The potential is written here in JAX,
independently of the library, in the library's parameter layout
(:class:`skbayes_sg.models.MLPModel`: per layer ``coef (n_in, n_out)`` row-major then
``intercept``; the regressor appends ``log sigma`` with ``sigma^2 ~ InvGamma(a, b)``), and
:func:`check_potential` compares its value and gradient with the library's ``model_.nll`` +
``prior_`` before any sampling.  NumPyro's NUTS (diagonal mass adapted in warm-up) runs
``chains`` chains from independent Glorot starts; their draws are cached as ``.npz`` under a key
that hashes the problem (data, network, per-layer prior sds, noise prior) and the settings.
"""

import hashlib
import json
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from skbayes_sg import BayesianMLPClassifier, BayesianMLPRegressor

__all__ = ["PRIORS", "RefProblem", "check_potential", "get_reference", "library_estimator"]

_VERSION = "mlp-ref-1"  # bump when the potential or the sampling protocol changes
DEFAULT_CACHE = "~/.cache/skbayes_sg/mlp_reference"


def _library_sds(units, prior_scale):
    """The library's prior: weight sd ``prior_scale``, bias sd ``10 max(prior_scale, 1)``
    (the classifier's ``_intercept_scale``; the regressor's too for standardized y)."""
    n = len(units) - 1
    return (prior_scale,) * n, (10.0 * max(prior_scale, 1.0),) * n


def _fanin_sds(units, prior_scale):
    """Weight sd ``prior_scale / sqrt(fan_in)`` per layer; the library's bias sd."""
    return (tuple(prior_scale / np.sqrt(n_in) for n_in in units[:-1]),
            _library_sds(units, prior_scale)[1])


#: prior name -> ``(units, prior_scale) -> (weight sds, bias sds)``, one per layer
PRIORS = {"library": _library_sds, "fanin": _fanin_sds}


@dataclass(frozen=True, eq=False)
class RefProblem:
    """A data split, a network and its prior: what one reference samples."""

    name: str
    kind: str  # "classifier" or "regressor"
    X: np.ndarray
    y: np.ndarray  # class codes 0..K-1, or standardized targets
    X_test: np.ndarray
    y_test: np.ndarray
    hidden: tuple
    activation: str = "relu"
    prior: str = "library"
    prior_scale: float = 1.0
    noise_a: float = 1.0  # regressor: sigma^2 ~ InvGamma(noise_a, noise_b)
    noise_b: float = 0.01

    @property
    def units(self):
        out = 1 if self.kind == "regressor" else int(self.y.max()) + 1
        return (self.X.shape[1], *self.hidden, out)

    def sds(self):
        return PRIORS[self.prior](self.units, self.prior_scale)

    def model(self):
        return library_estimator(self, n_warmup=1)._make_model(self.units[0], self.units[-1])

    def precision(self):
        """Diagonal prior precision ``(p,)`` in the library's layout (0 on ``log sigma``)."""
        ws, bs = self.sds()
        prec = []
        for (n_in, n_out), w, b in zip(zip(self.units[:-1], self.units[1:]), ws, bs):
            prec += [np.full(n_in * n_out, w ** -2.0), np.full(n_out, b ** -2.0)]
        return np.concatenate(prec + ([np.zeros(1)] if self.kind == "regressor" else []))

    def spec(self):
        """Everything but the arrays, for the cache key and the JSON."""
        ws, bs = self.sds()
        return {"name": self.name, "kind": self.kind, "units": list(self.units),
                "activation": self.activation, "prior": self.prior,
                "prior_scale": self.prior_scale, "weight_sds": list(ws), "bias_sds": list(bs),
                "noise_prior": [self.noise_a, self.noise_b] if self.kind == "regressor" else None,
                "n_train": len(self.y), "n_test": len(self.y_test)}


def library_estimator(problem, **kwargs):
    """The library's estimator for ``problem``'s network and prior scale (``kwargs`` added)."""
    cls = BayesianMLPRegressor if problem.kind == "regressor" else BayesianMLPClassifier
    return cls(hidden_layer_sizes=problem.hidden, activation=problem.activation,
               prior_scale=problem.prior_scale, **kwargs)


def potential(problem):
    """``U(theta)`` in JAX: the negative log posterior (constants dropped), library layout."""
    import jax
    import jax.numpy as jnp

    X, y, prec = jnp.asarray(problem.X), jnp.asarray(problem.y), jnp.asarray(problem.precision())
    act = {"relu": jax.nn.relu, "tanh": jnp.tanh, "logistic": jax.nn.sigmoid}[problem.activation]
    units, regress = problem.units, problem.kind == "regressor"

    def forward(theta):
        a, start = X, 0
        for l, (n_in, n_out) in enumerate(zip(units[:-1], units[1:])):
            W = theta[start:start + n_in * n_out].reshape(n_in, n_out)
            start += n_in * n_out
            z = a @ W + theta[start:start + n_out]
            start += n_out
            a = act(z) if l < len(units) - 2 else z
        return a

    def U(theta):
        z = forward(theta)
        prior = 0.5 * jnp.sum(prec * theta * theta)
        if not regress:
            zy = jnp.take_along_axis(z, y[:, None], axis=1)[:, 0]
            return jnp.sum(jax.nn.logsumexp(z, axis=1) - zy) + prior
        t = theta[-1]
        nll = 0.5 * jnp.exp(-2 * t) * jnp.sum((y - z[:, 0]) ** 2) + y.size * t
        return nll + prior + 2 * problem.noise_a * t + problem.noise_b * jnp.exp(-2 * t)

    return U


def check_potential(problem, U, n_points=4, seed=0):
    """Max relative difference of ``U``'s value differences and gradients from the library's.

    A short library fit gives ``model_``, ``prior_`` and the encoded targets; the library's
    prior must be the problem's when ``problem.prior == "library"`` (else this raises), and the
    comparison uses the problem's precision in the library's prior class (``prior_`` replaced).
    """
    import jax

    est = library_estimator(problem, n_warmup=10, n_draws=10, thin=1, max_doublings=0,
                            random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(problem.X, problem.y)
    y_enc = est._encode_targets(problem.y)[0] if problem.kind == "regressor" else problem.y
    if problem.kind == "regressor" and not np.allclose(y_enc, problem.y, atol=1e-12):
        raise RuntimeError(f"{problem.name}: the regressor re-standardizes y; pass targets "
                           "standardized with mean 0 and sd 1 (np.std).")
    same = np.allclose(est.prior_.precision, problem.precision(), rtol=1e-12, atol=0)
    if problem.prior == "library" and not same:
        raise RuntimeError(f"{problem.name}: the library's prior is no longer PRIORS['library'] "
                           "at this prior_scale; update PRIORS (the cache key follows it).")
    lib_prior = replace(est.prior_, precision=problem.precision())
    if problem.kind == "regressor" and not np.allclose([lib_prior.a, lib_prior.b],
                                                       [problem.noise_a, problem.noise_b]):
        raise RuntimeError(f"{problem.name}: the library's noise prior is InvGamma"
                           f"({lib_prior.a}, {lib_prior.b}), not the problem's.")
    if problem.kind == "regressor":
        lib_prior = replace(lib_prior, a=problem.noise_a, b=problem.noise_b)
    rng = np.random.default_rng(seed)
    pts = np.stack([est.model_.init_position(rng) for _ in range(n_points)])
    lib = est.model_.nll(pts, problem.X, y_enc).sum(axis=1) + lib_prior.value(pts)
    lib_g = est.model_.grad_sum(pts, problem.X, y_enc) + lib_prior.grad(pts)
    vg = jax.value_and_grad(U)
    ours = [tuple(map(np.asarray, vg(p))) for p in pts]
    d_lib = lib[1:] - lib[0]
    d_ours = np.array([v for v, _ in ours[1:]]) - float(ours[0][0])
    err_v = np.max(np.abs(d_lib - d_ours) / (1.0 + np.abs(d_lib)))
    g = np.array([g for _, g in ours])
    err_g = np.max(np.abs(g - lib_g)) / (1.0 + np.max(np.abs(lib_g)))
    err = float(max(err_v, err_g))
    if not err < 1e-8:
        raise RuntimeError(f"{problem.name}: the JAX potential differs from the library's "
                           f"(relative {err:.2g}); fix _mlp_reference.potential")
    return err, bool(same)


def _key(problem, settings):
    h = hashlib.sha1(json.dumps([_VERSION, problem.spec(), settings], sort_keys=True).encode())
    for a in (problem.X, problem.y, problem.X_test):
        h.update(np.ascontiguousarray(a).tobytes())
    return f"{problem.name}-{h.hexdigest()[:12]}.npz"


def _nuts(problem, U, settings, seed=0):
    """NumPyro NUTS, ``chains`` vectorized chains from independent Glorot starts."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer import MCMC, NUTS

    s = settings
    model = problem.model()
    rngs = np.random.default_rng(seed).spawn(s["chains"])
    init = np.stack([model.init_position(r) for r in rngs])
    kernel = NUTS(potential_fn=U, dense_mass=False, max_tree_depth=s["max_tree_depth"],
                  target_accept_prob=s["target_accept"])
    mcmc = MCMC(kernel, num_warmup=s["warmup"], num_samples=s["draws"], thinning=s["thin"],
                num_chains=s["chains"], chain_method="vectorized", progress_bar=False)
    t0 = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), init_params=jnp.asarray(init),
             extra_fields=("diverging", "num_steps", "accept_prob"))
    theta = np.asarray(mcmc.get_samples(group_by_chain=True))
    ex = {k: np.asarray(v) for k, v in mcmc.get_extra_fields(group_by_chain=True).items()}
    return theta, {"seconds": time.perf_counter() - t0,
                   "divergences": int(ex["diverging"].sum()),
                   "mean_leapfrog": float(ex["num_steps"].mean()),
                   "max_depth_hits": float(np.mean(ex["num_steps"] >= 2 ** s["max_tree_depth"]
                                                   - 1)),
                   "mean_accept": float(ex["accept_prob"].mean())}


def get_reference(problem, settings, cache_dir):
    """``(draws (chains, draws, p), info)``: cached, or sampled after :func:`check_potential`."""
    U = potential(problem)
    err, same = check_potential(problem, U)
    path = Path(cache_dir).expanduser() / _key(problem, settings)
    cached = path.exists()
    if cached:
        with np.load(path, allow_pickle=False) as f:
            theta, info = f["draws"], json.loads(str(f["info"]))
        print(f"[reference] {problem.name}: draws from {path}", flush=True)
    else:
        import jax

        print(f"[reference] {problem.name}: NUTS {settings}", flush=True)
        theta, info = _nuts(problem, jax.jit(U), settings)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, draws=theta, info=json.dumps(info))
        print(f"[reference] {problem.name}: {info['seconds']:.0f} s, cached at {path}",
              flush=True)
    return theta, {**info, "potential_check": err, "library_prior_matches": same,
                   "cache": str(path), "from_cache": cached, "settings": settings}


def reference_cli(doc, tag, seeds, **extra):
    """The options of a script scored against these references (``--cache-dir``,
    ``--problems``, ``--seeds``: ``seeds = (quick, full)`` by default, and ``extra``), or None
    (with a "skipped" JSON written) when jax/numpyro are missing."""
    from _common import cli, jax_versions, write_json
    from _mlp_ref_eval import PROBLEMS

    args = cli(doc, cache_dir={"default": None, "help": f"default {DEFAULT_CACHE}"},
               problems={"nargs": "+", "default": list(PROBLEMS), "choices": list(PROBLEMS)},
               seeds={"type": int, "default": None}, **extra)
    if jax_versions(("numpyro",), f"[{tag}] jax/numpyro needed ({{exc}}): pip install "
                    "'skbayes_sg[bench]'") is None:
        write_json(args.json, {"skipped": "jax/numpyro not importable"})
        return None
    if args.cache_dir is None:
        import tempfile

        args.cache_dir = tempfile.mkdtemp() if args.quick else DEFAULT_CACHE
    args.seeds = args.seeds or seeds[0 if args.quick else 1]
    return args

