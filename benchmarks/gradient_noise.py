"""Gradient noise of every subsampling strategy relative to ``uniform``.

For each data set and subsample fraction f (b = max(1, round(f N))), every
strategy of ``skbayes_sg.subsampling.SUBSAMPLING`` (except ``full``) is built
once on the standardized training data and asked for K gradient estimates at
a few posterior draws (from a default fit).  Figure of merit (methods.md):
the mean squared error ``E||g - ∇U||^2`` against the exact full-data
gradient (the pseudo-variance ``tr Cov(g)`` for unbiased strategies; for
``svrg`` the white-noise equivalent of its anchor error plus the correction,
see ``EFFECTIVE_NOISE``).  Strategies spend different numbers of per-example gradient
evaluations per estimate (control variates 1 per example for GLMs, EWSG
``M b``, SVRG ``2b + n1/tau``), so the ratio reported is at EQUAL COST:
``(MSE_s x evals_s) / (MSE_uniform x evals_uniform)`` -- minibatch variance
scales as 1/b, so this is the MSE ratio a strategy would have with the same
number of gradient evaluations per step as uniform.  Raw ratios and costs are
in the JSON too.

    python benchmarks/gradient_noise.py [--quick] [--json PATH] [--markdown PATH] [--data-dir DIR]

JSON: ``{dataset: {strategy: {fraction: ratio}}}`` (equal-cost ratios); the
details go to ``<PATH stem>_details.json``.
"""

import argparse
import time
import warnings

import numpy as np

from _common import machine, write_json, write_markdown
from _data import load
from skbayes_sg import BayesianLinearRegression, BayesianLogisticRegression
from skbayes_sg.models import Posterior
from skbayes_sg.preprocessing import laplace_at
from skbayes_sg.samplers import ewsg_energy, from_laplace, metropolis_pick
from skbayes_sg.subsampling import SUBSAMPLING

DATASETS = ["pendigits", "letter", "a9a", "casp", "cadata"]
FRACTIONS = [0.001, 0.01, 0.1]


def posterior_problem(X, y, task, n_positions, seed=0):
    """``(posterior, laplace)`` at the mode, ``n_positions`` posterior draws, the step."""
    Est = BayesianLinearRegression if task == "regression" else BayesianLogisticRegression
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Est(n_warmup=300, n_draws=100, n_chains=2, random_state=seed).fit(X, y)
    y_enc = y if task == "regression" else est._code_targets(np.searchsorted(est.classes_, y))
    posterior = Posterior(est.model_, est.prior_, X, y_enc)
    problem = (posterior, laplace_at(posterior, est.mode_, "auto")[0])
    pooled = est.draws_.reshape(-1, est.draws_.shape[-1])
    pick = np.random.default_rng(seed).choice(pooled.shape[0], n_positions, replace=False)
    return problem, pooled[pick], est.diagnostics_["step_size"]


def _mse_and_cost(est, posterior, thetas, n_repeats, seed, pick=None):
    """Mean ``||g - ∇U||^2`` and evaluations per estimate at ``thetas``.

    ``pick(G (M, C, p), t) -> (C, p)`` chooses among the candidates of an
    estimator with ``n_candidates > 1`` (EWSG).
    """
    rngs = tuple(np.random.default_rng([seed, c]) for c in range(thetas.shape[0]))
    exact = posterior.full_grad(thetas)
    state = est.init(rngs, thetas)
    sq, evals = 0.0, 0
    for t in range(n_repeats):
        if pick is None:
            g, state, n = est.estimate(rngs, thetas, state)
        else:
            G, state, n = est.candidates(rngs, thetas, state)
            g = pick(G, t)
        sq += np.sum((g - exact) ** 2)
        evals += n
    n_est = n_repeats * thetas.shape[0]
    return sq / n_est, evals / n_est


def _ewsg_pick(laplace, step_size, n_repeats, n_chains, seed, friction=1.0):
    """EWSG's choice at rest (zero momentum): ``E_m = ||h L^T g_m||^2 / (4 gamma h)``."""
    to_u = from_laplace(laplace).to_u
    u = np.random.default_rng(seed).random((n_repeats, n_chains, 64))

    def pick(G, t):
        energy = ewsg_energy(G, 0.0, step_size, friction, to_u)
        m = metropolis_pick(energy, u[t, :, :G.shape[0] - 1])
        return G[m, np.arange(G.shape[1])]

    return pick


def measure(strategy, problem, thetas, b, n_repeats, step_size, seed=0):
    """(mse, evals per estimate per position, build seconds, build evals).

    The MSE is that of ``est.pilot()`` -- what ``step_size="auto"`` measures:
    for SVRG the white-noise equivalent of the frozen anchor error plus the
    correction at posterior draws (at a fixed position the running estimator
    would anchor at theta itself) -- and the cost the running estimator's.
    EWSG picks among its candidates as the kernel does at zero momentum.
    """
    t0 = time.perf_counter()
    est = strategy.build(*problem, batch_size=b, rng=np.random.default_rng(seed))
    build_s = time.perf_counter() - t0
    pick = None
    if est.n_candidates > 1:
        pick = _ewsg_pick(problem[1], step_size, n_repeats, thetas.shape[0], seed)
    mse, _ = _mse_and_cost(est.pilot(), problem[0], thetas, n_repeats, seed, pick)
    _, evals = _mse_and_cost(est, problem[0], thetas, n_repeats, seed, pick)
    return mse, evals, build_s, est.preprocessing_evals


def run_dataset(name, data_dir, fractions, n_positions, n_repeats, quick=False):
    X, y, _, _, task = load(name, data_dir, quick=quick)
    problem, thetas, h = posterior_problem(X, y, task, n_positions)
    N, table, details = X.shape[0], {}, {}
    for sname, cls in SUBSAMPLING.items():
        if sname == "full":
            continue
        table[sname], details[sname] = {}, {}
        for f in fractions:
            b = max(1, int(round(f * N)))
            try:
                details[sname][f] = measure(cls(), problem, thetas, b, n_repeats, h)
            except Exception as exc:  # report, don't hide
                details[sname][f] = f"error: {exc}"
    for sname in table:
        for f in fractions:
            s, u = details[sname][f], details["uniform"][f]
            if isinstance(s, tuple):
                table[sname][f] = float((s[0] * s[1]) / (u[0] * u[1]))
    return table, details, N


def fit_costs(name, data_dir, quick=False):
    """Preprocessing seconds and gradient evaluations of every strategy inside ``fit``.

    Everything ``fit`` does before sampling: mode, Laplace, the strategy's own
    preprocessing (k-means, weights, compression, ...) and the step-size pilot.
    """
    X, y, _, _, task = load(name, data_dir, quick=quick)
    Est = BayesianLinearRegression if task == "regression" else BayesianLogisticRegression
    rows = {}
    for sname in SUBSAMPLING:
        kw = {"sampler": "hmc"} if sname == "full" else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = Est(subsampling=sname, n_warmup=10, n_draws=10, n_chains=1, random_state=0,
                    **kw).fit(X, y).diagnostics_
        rows[sname] = {"seconds": d["preprocessing_seconds"],
                       "grad_evals": d["preprocessing_grad_evals"],
                       "data_passes": d["preprocessing_grad_evals"] / X.shape[0]}
    return rows, X.shape[0]


def cost_markdown(name, rows, n):
    lines = [f"### Preprocessing inside `fit` on {name} (N = {n:,}; mode, Laplace, strategy, "
             "step-size pilot)", "", "| strategy | seconds | gradient evaluations | data passes |",
             "|---|---|---|---|"]
    for sname, r in rows.items():
        lines.append(f"| {sname} | {r['seconds']:.2f} | {r['grad_evals']:,} | "
                     f"{r['data_passes']:.1f} |")
    return "\n".join(lines) + "\n"


def markdown(results, details, sizes, args):
    lines = [f"## Gradient noise at equal cost ({'quick' if args.quick else 'full'} run)", "",
             "MSE x (gradient evaluations per estimate), relative to `uniform` "
             "(< 1 is better); evaluated at posterior draws.", "",
             f"Machine: {machine()}; positions {args.positions}, repeats {args.repeats}, seed 0.", ""]
    for name, table in results.items():
        fr = sorted(next(iter(table.values())))
        lines += [f"### {name} (N = {sizes[name]:,})", "",
                  "| strategy | " + " | ".join(f"f = {f}" for f in fr) + " | build s | build grad evals (data passes) |",
                  "|---|" + "---|" * (len(fr) + 2)]
        for sname, row in table.items():
            d = details[name][sname].get(0.01, details[name][sname][fr[0]])
            build = (f"{d[2]:.2f} | {d[3]:,} ({d[3] / sizes[name]:.1f})" if isinstance(d, tuple)
                     else "- | -")
            cells = [f"{row[f]:.3g}" if f in row else "error" for f in fr]
            lines.append(f"| {sname} | " + " | ".join(cells) + f" | {build} |")
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--data-dir")
    ap.add_argument("--datasets", nargs="*")
    args = ap.parse_args()
    names = args.datasets or (["pendigits", "cadata"] if args.quick else DATASETS)
    fractions = [0.01, 0.1] if args.quick else FRACTIONS
    args.positions, args.repeats = (2, 10) if args.quick else (4, 100)
    results, details, sizes = {}, {}, {}
    for name in names:
        results[name], details[name], sizes[name] = run_dataset(
            name, args.data_dir, fractions, args.positions, args.repeats, args.quick)
    text = markdown(results, details, sizes, args)
    largest = names[-1] if args.quick else max(names, key=lambda n: sizes[n])
    costs, n = fit_costs(largest, args.data_dir, args.quick)
    text += "\n" + cost_markdown(largest, costs, n)
    print(text)
    write_markdown(args.markdown, text)
    write_json(args.json, results)
    if args.json:
        write_json(args.json.replace(".json", "_details.json"),
                   {"machine": machine(), "details": details, "sizes": sizes,
                    "fit_costs": {largest: costs}})


if __name__ == "__main__":
    main()
