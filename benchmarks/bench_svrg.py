"""SVRG-SGLD (vrSG-MCMC) vs SGLD from a cold start, seed paper 001's protocol.

Chen, Wang, Zhang, Su & Carin (2017) run SGLD and vrSG-MCMC from a random
initialisation with minibatches of ``b = 10`` rows and an anchor minibatch of
``n1 = 1000`` rows, tune each method's step and plot test error / loss of the
running sample average against data passes (their Figure 2, Appendix F), and
vary ``n1`` (their Figure 5).  Here, the same protocol:

* ``sampler="sgld"``, ``preconditioner=None``, a cold start (``init="zeros"``; the MLP,
  whose hidden units zeros would tie, at prior draws with ``prior_scale=0.1``), one
  chain per fit, ``batch_size=10``;
* arms: ``uniform`` (SGLD), ``svrg`` with ``n1 = 1000`` (vrSG-MCMC; refresh
  every ``tau = n1 / (10 b) = 10`` steps, the library's rule), ``svrg`` with the
  exact anchor ``n1 = N`` (SVRG-LD) and ``control_variates`` (anchored at the
  mode, for context);
* each arm's step is the best of a grid (multiples of the library's automatic
  step for ``uniform``) by the log-loss on a validation split (a fifth of the
  training rows, never used for fitting) at the end of the budget;
* every arm gets the same sampling budget in data passes; curves are the
  test error / log-loss of the running posterior-predictive average against
  sampling data passes (the mode search and pilots, which the paper does not
  have, are reported separately);
* n1 sensitivity: vrSG-MCMC at n1 in {100, 300, 1000, 3000, N} at its tuned step.

    python benchmarks/bench_svrg.py [--quick] [--json PATH] [--markdown PATH] \
        [--data-dir DIR] [--plot PATH]
"""

import time
import warnings

import numpy as np
from _common import cli, header, machine, mean_sd, save_plot, write_json, write_markdown
from _data import load

from skbayes_sg import BayesianLogisticRegression, BayesianMLPClassifier
from skbayes_sg.subsampling import SVRG, SVRGAnchor
from skbayes_sg.utils import DivergenceError

ARMS = {"uniform": "uniform", "svrg n1=1000": SVRG(n1=1000), "svrg n1=N": "exact",
        "control_variates": "control_variates"}
GRID = (1, 4, 16, 64, 256)  # multiples of uniform's automatic step
# (data set, model, max training rows, max test rows, sampling passes, hidden)
FULL = {"tasks": [("a9a", "logistic", None, 4000, 10, None),
                   ("mnist", "mlp", 6000, 1000, 5, (50,))],
        "seeds": 3, "n_draws": 40, "batch": 10, "n1_grid": (100, 300, 1000, 3000)}
QUICK = {"tasks": [("a9a", "logistic", 300, 100, 2, None)],
         "seeds": 1, "n_draws": 5, "batch": 10, "n1_grid": (100,)}


def subsampling(arm, n_rows):
    """The ``subsampling`` value of an arm (``"exact"``: SVRG with ``n1 = N``)."""
    return SVRG(n1=n_rows) if arm == "exact" else arm


def per_step_cost(sub, model, n_rows, batch):
    """Nominal per-example gradients per step (to give every arm the same budget)."""
    if isinstance(sub, SVRG):
        n1, tau = SVRGAnchor(sub.n1).resolve(n_rows, batch)
        return (n1 + 2 * batch * (tau - 1)) / tau
    return 2 * batch if sub == "control_variates" and model == "mlp" else batch


def make(task, sub, step, seed, n_steps, n_draws, batch):
    """A cold-start SGLD estimator for ``task`` running ``n_steps`` steps."""
    thin = max(n_steps // n_draws, 1)
    common = {"sampler": "sgld", "subsampling": sub, "batch_size": batch, "step_size": step,
              "preconditioner": None, "n_warmup": 0, "n_draws": n_draws, "thin": thin,
              "n_chains": 1, "n_jobs": 1, "random_state": seed}
    if task[1] == "mlp":  # zeros would tie the hidden units: start at prior draws of sd 0.1
        return BayesianMLPClassifier(hidden_layer_sizes=task[5], activation="logistic",
                                     prior_scale=0.1, init="prior", **common)
    common["init"] = "zeros"
    return BayesianLogisticRegression(**common)


def curves(est, X, y):
    """Test error (%) and log-loss of the running average over the draws."""
    draws = est.draws_[0]
    proba = est.model_.predict_output(draws, X)
    running = np.cumsum(proba, axis=0) / np.arange(1, len(draws) + 1)[:, None, None]
    idx = np.searchsorted(est.classes_, y)
    err = 100.0 * np.mean(np.argmax(running, axis=2) != idx[None, :], axis=1)
    p_true = running[:, np.arange(len(y)), idx]
    return err, -np.mean(np.log(np.maximum(p_true, 1e-300)), axis=1)


def run(task, sub, step, seed, data, size):
    """One fit at ``step`` for the budget; None if it diverged."""
    Xtr, ytr, Xte, yte = data
    per_step = per_step_cost(sub, task[1], len(ytr), size["batch"])
    n_steps = max(int(task[4] * len(ytr) / per_step), size["n_draws"])
    est = make(task, sub, step, seed, n_steps, size["n_draws"], size["batch"])
    try:
        est.fit(Xtr, ytr)
    except DivergenceError:
        return None
    d, err_loss = est.diagnostics_, curves(est, Xte, yte)
    k = np.arange(1, size["n_draws"] + 1) * est.thin
    return {"passes": (k * d["grad_evals_per_step"] / len(ytr)).tolist(),
            "error": err_loss[0].tolist(), "logloss": err_loss[1].tolist(),
            "final_error": float(err_loss[0][-1]), "final_logloss": float(err_loss[1][-1]),
            "sampling_passes": d["sampling_grad_evals"] / len(ytr),
            "preprocessing_passes": d["preprocessing_grad_evals"] / len(ytr),
            "grads_per_step": float(d["grad_evals_per_step"]), "steps": int(k[-1]),
            "step": float(step), "seconds": float(d["sampling_seconds"])}


def tune(task, sub, h0, data, size):
    """Best step of ``GRID * h0`` by validation log-loss (seed 100), and the grid's scores."""
    Xtr, ytr = data[0], data[1]
    cut = len(ytr) * 4 // 5
    fit_val = (Xtr[:cut], ytr[:cut], Xtr[cut:], ytr[cut:])
    scores = {}
    for m in GRID:
        r = run(task, sub, m * h0, 100, fit_val, size)
        scores[m] = np.inf if r is None else r["final_logloss"]
    return min(scores, key=scores.get) * h0, scores


def run_task(task, args, size):
    name = task[0]
    Xtr, ytr, Xte, yte, _ = load(name, args.data_dir, quick=args.quick, max_rows=task[2])
    data = (Xtr, ytr, Xte[:task[3]], yte[:task[3]])
    h0 = make(task, "uniform", "auto", 0, 1, 1, size["batch"]).fit(Xtr, ytr).diagnostics_[
        "step_size"]
    out = {"model": task[1], "n_train": len(ytr), "n_test": len(data[3]), "passes": task[4],
           "h0": h0, "arms": {}, "n1": {}}
    for arm, value in ARMS.items():
        sub = subsampling(value, len(ytr))
        step, scores = tune(task, sub, h0, data, size)
        rows = [run(task, sub, step, seed, data, size) for seed in range(size["seeds"])]
        out["arms"][arm] = {"step": step, "grid": {str(k): v for k, v in scores.items()},
                            "runs": [r for r in rows if r is not None]}
        print(f"[{name} {arm}] step {step:.3g} err "
              f"{np.mean([r['final_error'] for r in out['arms'][arm]['runs']]):.2f}", flush=True)
    step = out["arms"]["svrg n1=1000"]["step"]
    for n1 in (*size["n1_grid"], len(ytr)):
        rows = [run(task, SVRG(n1=min(n1, len(ytr))), step, seed, data, size)
                for seed in range(size["seeds"])]
        out["n1"][str(n1)] = [r for r in rows if r is not None]
    return out


COLS = [("final_error", "test error %", ".3g"), ("final_logloss", "test log-loss", ".4f"),
        ("grads_per_step", "grads/step", ".3g"), ("steps", "steps", ".3g"),
        ("sampling_passes", "sampling passes", ".3g"),
        ("preprocessing_passes", "preproc. passes", ".3g"), ("seconds", "sampling s", ".2g")]


def table(rows_by_label, first):
    lines = [f"| {first} | " + " | ".join(c[1] for c in COLS) + " |", "|---|" + "---|" * len(COLS)]
    for label, rows in rows_by_label.items():
        cells = [mean_sd([r[c] for r in rows], fmt) if rows else "diverged" for c, _, fmt in COLS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def markdown(results, args, size):
    note = ("Protocol of seed 001 (see the module docstring): cold start at zero, SGLD without "
            f"preconditioner, batch {size['batch']}, one chain, {size['n_draws']} stored draws "
            "spread over the budget (no warm-up discarded: the curves show the transient); each "
            "arm's step is the best of GRID x h0 (h0 = the library's automatic step for uniform) "
            "by validation log-loss; test metrics are of the running posterior-predictive "
            "average. Costs in per-example gradient evaluations / N (sampling passes); the "
            "preprocessing passes (mode, pilots) are the library's, which the paper has not. "
            "The MLP is 784-50-10 with sigmoid units (paper 784-100-10) on the first 6,000 "
            "MNIST rows, prior sd 0.1, started at prior draws. Seconds are on a shared machine (another benchmark ran alongside).")
    seeds = {name: list(range(size["seeds"])) for name in results}
    lines = [header("vrSG-MCMC (SVRG-SGLD) vs SGLD from a cold start, seed paper 001", args,
                    seeds=seeds, repeats={n: size["seeds"] for n in seeds}, note=note)]
    for name, res in results.items():
        lines += ["", f"### {name}: {res['model']} (N = {res['n_train']}, test {res['n_test']}, "
                  f"{res['passes']} sampling passes, h0 = {res['h0']:.3g})", ""]
        lines += table({f"{a} (step {v['step']:.3g})": v["runs"] for a, v in res["arms"].items()},
                       "arm (tuned step)")
        lines += ["", "Validation log-loss over the step grid (multiples of h0; inf = diverged):", "",
                  "| arm | " + " | ".join(f"{m}x" for m in GRID) + " |",
                  "|---|" + "---|" * len(GRID)]
        for arm, v in res["arms"].items():
            lines.append(f"| {arm} | " + " | ".join(f"{s:.4f}" for s in v["grid"].values()) + " |")
        lines += ["", "n1 sensitivity (vrSG-MCMC at the n1=1000 arm's step, tau = n1 / (10 b)):",
                  ""]
        lines += table({f"n1 = {k}": v for k, v in res["n1"].items()}, "anchor batch")
    return "\n".join(lines)


def figure(results):
    def draw(plt):
        fig, axes = plt.subplots(len(results), 2, figsize=(10, 3.4 * len(results)), squeeze=False)
        for row, (name, res) in zip(axes, results.items()):
            for ax, metric in zip(row, ["error", "logloss"]):
                for arm, v in res["arms"].items():
                    if not v["runs"]:
                        continue
                    x = np.mean([r["passes"] for r in v["runs"]], axis=0)
                    y = np.array([r[metric] for r in v["runs"]])
                    ax.plot(x, y.mean(0), label=arm)
                    ax.fill_between(x, y.mean(0) - y.std(0), y.mean(0) + y.std(0), alpha=0.2)
                ax.set_xlabel("sampling data passes")
                ax.set_ylabel(f"{name} test {'error %' if metric == 'error' else 'log-loss'}")
            row[0].legend(fontsize=8)
        fig.suptitle("SGLD from a cold start: uniform vs vrSG-MCMC (tuned steps; mean ± sd)")
        fig.tight_layout()
        return fig
    return draw


def main():
    args = cli(__doc__)
    size = QUICK if args.quick else FULL
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = {task[0]: run_task(task, args, size) for task in size["tasks"]}
    elapsed = time.perf_counter() - start
    print(f"[done] {elapsed:.1f} s")
    write_json(args.json, {"machine": machine(), "seconds": elapsed, "results": results})
    write_markdown(args.markdown, markdown(results, args, size) + f"\nTotal run time: {elapsed:.0f} s.\n")
    save_plot(figure(results), args.plot)


if __name__ == "__main__":
    main()
