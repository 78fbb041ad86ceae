"""The default and every sampler x subsampling at its defaults against NumPyro NUTS, and speed
vs BlackJAX.

Usage::

    python benchmarks/bench_peers.py --data-dir /work/shared/datasets \\
        --json benchmarks/results/bench_peers.json \\
        --markdown benchmarks/results/bench_peers.md

Issue 4, items 6 and 7.  Bayesian logistic regression with the library's
prior (N(0, prior_scale^2) on the weights, N(0, (10 prior_scale)^2) on the
intercept, prior_scale = 1) on a9a (as ``_data.load`` gives it: all 123
columns are 0/1 indicators, which the loader leaves unscaled) and on a
synthetic 200,000 x 20 design (equicorrelated Gaussian features, rho = 0.5,
weights N(0, 0.5^2), intercept 0.3, labels drawn from the logistic model).
Reference: NumPyro NUTS.  Each library fit keeps every default
(batch_size="auto", step_size="auto", 4 chains, Laplace preconditioner) except
``n_jobs=1`` and ``random_state=0``; errors are in reference-sd units.
BlackJAX SGLD and SGLD-CV (jit + lax.scan, CPU) run at batch 100 and the
library's chain length, beside library SGLD / SGLD-CV fits at batch 100 for
the per-step cost; their step size is an oracle (a fraction of the
smallest reference posterior variance), since BlackJAX has no automatic rule.
Without jax the reference is a long skbayes_sg ``hmc`` + ``full`` run.
``--reference-cache DIR`` keeps the reference draws so the library side can
be rerun without repeating NUTS (40 min on a9a).
"""

import json
import time
import warnings
from pathlib import Path

import numpy as np

import _peers
from _common import LIBRARY_WARNINGS, cli, header, save_plot, write_json, write_markdown
from _data import load
from skbayes_sg import BayesianLogisticRegression
from skbayes_sg.diagnostics import assess
from skbayes_sg.samplers import SAMPLERS
from skbayes_sg.subsampling import SUBSAMPLING

BJ_STEP = 0.1  # BlackJAX step = BJ_STEP * smallest reference posterior variance
BJ_BATCH = 100  # BlackJAX minibatch; the library's speed rows use it too (its default is "auto")
SPEED_PAIRS = (("sgld + uniform", "blackjax sgld"), ("sgld + control_variates", "blackjax sgld-cv"))


def synthetic(n, d=20, seed=0):
    rng = np.random.default_rng(seed)
    L = np.linalg.cholesky(0.5 * np.eye(d) + 0.5)
    X = rng.standard_normal((n, d)) @ L.T
    w = 0.5 * rng.standard_normal(d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w + 0.3)))).astype(int)
    return X, y


def problems(args):
    """a9a and the synthetic design (``--quick``: a 1,000-row synthetic design only)."""
    if not args.quick and "a9a" in args.problems:
        X, y, _, _, _ = load("a9a", args.data_dir)
        yield "a9a", X, (y == np.unique(y)[1]).astype(int)  # labels -1/+1 -> 0/1
    if "synthetic" not in args.problems:
        return
    n = 1000 if args.quick else 200_000
    yield f"synthetic {n:,} x 20", *synthetic(n)


def chain_stats(draws):
    """Min bulk ESS and max split R-hat over coordinates of ``draws (chains, draws, p)``.

    Peers' draws are judged by the library's one assessment
    (:func:`skbayes_sg.diagnostics.assess`), like its own fits.
    """
    verdict = assess(draws)
    return float(np.nanmin(verdict.ess_bulk)), float(np.nanmax(verdict.rhat))


def compare(draws, ref):
    """Mean error (reference sds) and sd ratios of ``draws`` against reference draws."""
    flat, rflat = draws.reshape(-1, draws.shape[-1]), ref.reshape(-1, ref.shape[-1])
    sd = rflat.std(0)
    err = np.abs(flat.mean(0) - rflat.mean(0)) / sd
    ratio = flat.std(0) / sd
    return {"err_max": float(err.max()), "err_median": float(np.median(err)),
            "sd_min": float(ratio.min()), "sd_median": float(np.median(ratio)),
            "sd_max": float(ratio.max())}


def cached_reference(name, X, y, args, peers):
    """:func:`reference`, read from / written to ``--reference-cache`` when given.

    The cache (``<dir>/<problem>_reference.npz``: the reference draws and their
    summary) lets the library side be rerun without the NUTS run; it is keyed
    by the NUTS settings, and a mismatch recomputes.
    """
    path = Path(args.reference_cache) / f"{name}_reference.npz" if args.reference_cache else None
    key = f"{args.quick} {args.nuts_warmup} {args.nuts_draws} {list(X.shape)}"
    if path is not None and path.exists():
        cached = np.load(path, allow_pickle=False)
        if str(cached["key"]) == key:
            print(f"[{name}] reference read from {path}", flush=True)
            return cached["theta"], json.loads(str(cached["info"]))
    theta, info = reference(X, y, args, peers)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, theta=theta, info=json.dumps(info), key=key)
    return theta, info


def reference(X, y, args, peers):
    if peers and not args.quick:  # --quick: NUTS compilation alone exceeds the time budget
        c, w, n = (4, args.nuts_warmup, args.nuts_draws)
        theta, secs, grads = _peers.nuts_reference(X, y, 1.0, chains=c, warmup=w, draws=n)
        what = f"NumPyro NUTS, {c} chains x {n} draws after {w} warm-up"
    else:
        n = 300 if args.quick else 4000
        peer = "jax not installed" if not peers else "--quick"
        m = BayesianLogisticRegression(sampler="hmc", subsampling="full", n_draws=n,
                                       n_warmup=n // 2, n_jobs=1, random_state=1).fit(X, y)
        theta, secs = m.draws_, m.diagnostics_["sampling_seconds"]
        grads = m.diagnostics_["n_grad_evals"] / X.shape[0]
        what = f"skbayes_sg hmc+full, 4 chains x {n} draws ({peer})"
    ess, rhat = chain_stats(theta)
    return theta, {"what": what, "seconds": secs, "data_passes": grads, "min_ess": ess,
                   "max_rhat": rhat, "ess_per_s": ess / secs}


def run_combo(sampler, sub, X, y, ref, args, **params):
    m = BayesianLogisticRegression(sampler=sampler, subsampling=sub, n_jobs=1, random_state=0,
                                   **({"n_draws": args.draws} if args.draws else {}), **params)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            m.fit(X, y)
        except (ValueError, TypeError) as exc:
            return {"error": str(exc).split("\n")[0][:160]}
    secs = time.perf_counter() - t0
    d = m.diagnostics_
    ess = float(np.nanmin(d["ess"]))
    # every step run, the extensions' included (the draws kept are thinned back to n_draws)
    steps = m.n_chains * (m.n_warmup + d.get("sampling_steps", m.n_draws * m.thin))
    return {**compare(m.draws_, ref), "seconds": secs, "data_passes": float(d["data_passes"]),
            "preprocessing_s": float(d["preprocessing_seconds"]),
            "us_per_step": 1e6 * float(d["sampling_seconds"]) / steps,
            "min_ess": ess, "ess_per_s": ess / secs, "max_rhat": float(np.nanmax(d["rhat"])),
            "step_size": float(d["step_size"]),
            "warned": any(issubclass(w.category, LIBRARY_WARNINGS) for w in caught)}


def run_blackjax(X, y, ref, args):
    rflat = ref.reshape(-1, ref.shape[-1])
    step = BJ_STEP * float(rflat.var(0).min())
    out = {}
    variants = (("blackjax sgld", False), ("blackjax sgld-cv", True))
    for name, cv in variants[1:] if args.quick else variants:  # --quick: one compilation
        kw = dict(n_warmup=50, n_draws=100, n_chains=2) if args.quick else \
            dict(n_warmup=500, n_draws=args.draws or 1000, n_chains=4)
        draws, secs, comp = _peers.blackjax_sgld(
            X, y, 1.0, center=rflat.mean(0), step_size=step, batch_size=BJ_BATCH, cv=cv, **kw)
        ess, rhat = chain_stats(draws)
        steps = kw["n_chains"] * (kw["n_warmup"] + kw["n_draws"])
        passes = steps * BJ_BATCH * (2 if cv else 1) / X.shape[0] + (1 if cv else 0)
        out[name] = {**compare(draws, ref), "seconds": secs, "compile_s": comp,
                     "us_per_step": 1e6 * secs / steps, "data_passes": passes, "min_ess": ess,
                     "ess_per_s": ess / secs, "max_rhat": rhat, "step_size": step}
    return out


def _row(label, r):
    if "error" in r:
        return f"| {label} | n/a: {r['error']} |" + " |" * 10
    warned = {True: "**yes**", False: "no"}.get(r.get("warned"), "–")
    return (f"| {label} | {r['err_max']:.2f} | {r['err_median']:.2f} | {r['sd_min']:.2f} / "
            f"{r['sd_median']:.2f} / {r['sd_max']:.2f} | {r['seconds']:.3g} | "
            f"{r['data_passes']:.1f} | {r['min_ess']:.0f} | {r['ess_per_s']:.1f} | "
            f"{r['max_rhat']:.2f} | {r.get('us_per_step', float('nan')):.0f} | {warned} |")


def markdown(res, args):
    note = (__doc__.split("\n\n", 3)[3].strip() + "\n\nColumns: max / median |posterior-mean "
            "error| in reference sds; sd ratio min / median / max (1 = matches the reference); "
            "seconds = wall time of the whole fit (preprocessing + sampling); data passes "
            "(per-example gradient evaluations / N, preprocessing included); min bulk ESS and "
            "min ESS per wall second; max split R-hat; µs per sampler step (sampling seconds / "
            "chains x steps); warned = ConvergenceWarning or ApproximationWarning. The "
            "reference has its own Monte-Carlo error: with min ESS ~ E on both sides, "
            "errors of ~ 2/sqrt(E) sd are noise. "
            f"Peers: {res['peers'] or 'not installed'}. `n/a` = the library refuses the pair.")
    lines = [header("skbayes_sg at its defaults vs NumPyro NUTS and BlackJAX SGLD", args,
                    seeds="random_state=0 (library), PRNGKey(0) (NUTS), PRNGKey(1..4) "
                    "(BlackJAX chains)", repeats=1, note=note)]
    cols = ("| method | max err | median err | sd ratio | s | data passes | min ESS | ESS/s | "
            "max R-hat | µs/step | warned |\n" + "|---" * 11 + "|")
    for name, p in res["problems"].items():
        r = p["reference"]
        lines += [f"### {name} (N = {p['shape'][0]:,}, p = {p['shape'][1] + 1})", "",
                  f"Reference: {r['what']}: {r['seconds']:.1f} s, {r['data_passes']:.0f} data "
                  f"passes, min ESS {r['min_ess']:.0f}, max R-hat {r['max_rhat']:.3f}, ESS/s "
                  f"{r['ess_per_s']:.1f}.", "", cols]
        for label, row in p["peers"].items():
            lines.append(_row(f"{label} (step {row['step_size']:.2g}, compile "
                              f"{row['compile_s']:.1f} s)", row))
        lines += [_row(f"{k} (batch {BJ_BATCH})", v) for k, v in p.get("speed", {}).items()]
        lines += [_row(k, v) for k, v in p["combos"].items()]
        good = [k for k, v in p["combos"].items() if "error" not in v and v["err_max"] < 0.3
                and 0.8 < v["sd_min"] and v["sd_max"] < 1.25]
        silent = [k for k, v in p["combos"].items()
                  if "error" not in v and k not in good and not v["warned"]]
        lines += ["", f"Within 0.3 sd and sd ratio in [0.8, 1.25] on every coordinate: "
                  f"{len(good)} of {len(p['combos'])}: {', '.join(good) or 'none'}.", "",
                  "Outside that tolerance WITHOUT a warning: "
                  f"{', '.join(silent) or 'none'}.", ""]
        for ours, theirs in SPEED_PAIRS:
            lib, bj = p.get("speed", {}).get(ours), p["peers"].get(theirs)
            if lib and bj and "error" not in lib:
                lines += [f"Per-step cost at batch {BJ_BATCH}: skbayes_sg {ours} "
                          f"{lib['us_per_step']:.0f} µs vs {theirs} {bj['us_per_step']:.0f} µs "
                          f"({lib['us_per_step'] / bj['us_per_step']:.1f}x).", ""]
    return "\n".join(lines)


def _figure(res):
    def draw(plt):
        probs = res["problems"]
        fig, axes = plt.subplots(1, len(probs), figsize=(6 * len(probs), 4.5), squeeze=False)
        for ax, (name, p) in zip(axes[0], probs.items()):
            for label, r in {**p["combos"], **p["peers"]}.items():
                if "error" in r:
                    continue
                peer = label.startswith("blackjax")
                ax.scatter(r["seconds"], max(r["err_max"], 1e-3), s=30 if peer else 12,
                           marker="*" if peer else "o", c="C3" if r.get("warned") else "C0")
                if peer or label.startswith("sghmc + preferential_cv"):
                    ax.annotate(label, (r["seconds"], max(r["err_max"], 1e-3)), fontsize=7)
            ax.axhline(0.3, color="k", lw=0.7, ls=":")
            ax.set(xscale="log", yscale="log", xlabel="wall seconds (fit total)",
                   ylabel="max |mean error| / reference sd", title=f"{name} (red: warned)")
        fig.tight_layout()
        return fig
    return draw


def main():
    args = cli(__doc__, draws={"type": int, "default": None, "help": "library n_draws"},
               nuts_warmup={"type": int, "default": 500}, nuts_draws={"type": int, "default": 500},
               problems={"nargs": "+", "default": ["a9a", "synthetic"]},
               render={"help": "only re-render --markdown/--plot from this results JSON"},
               reference_cache={"help": "directory caching the reference draws per problem"})
    if args.render:  # re-render the tables and plot of a finished run
        res = json.loads(Path(args.render).read_text())
        write_markdown(args.markdown, markdown(res, args))
        return save_plot(_figure(res), args.plot)
    peers = _peers.available()
    combos = [("auto", "auto")] + (  # the default first, then every named pair
        [("sghmc", "preferential_cv"), ("hmc", "uniform")] if args.quick else
        [(a, b) for a in SAMPLERS for b in SUBSAMPLING])
    res = {"peers": peers, "problems": {}}
    for name, X, y in problems(args):
        print(f"[{name}] reference", flush=True)
        ref, rinfo = cached_reference(name, X, y, args, peers)
        p = res["problems"][name] = {"shape": list(X.shape), "reference": rinfo, "combos": {},
                                     "peers": run_blackjax(X, y, ref, args) if peers else {}}
        for smp, sub in combos:
            key = "default" if smp == sub == "auto" else f"{smp} + {sub}"
            print(f"[{name}] {key}", flush=True)
            p["combos"][key] = run_combo(smp, sub, X, y, ref, args)
        if peers:  # the per-step comparison with BlackJAX, at its batch
            p["speed"] = {k: run_combo(*k.split(" + "), X, y, ref, args, batch_size=BJ_BATCH)
                          for k, _ in SPEED_PAIRS}
    text = markdown(res, args)
    print(text)
    write_markdown(args.markdown, text)
    write_json(args.json, res)
    save_plot(_figure(res), args.plot)


if __name__ == "__main__":
    main()
