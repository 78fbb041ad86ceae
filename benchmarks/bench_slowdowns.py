"""Three default-fit slowdowns of the reliability issue, before and after their fixes.

* ``softmax_200``: a 200-class softmax (20,000 x 20 rows, 4,200 parameters), library defaults;
* ``compressed``: ``subsampling="compressed"`` on 10^6 x 50 float32 Gaussian rows (the default
  ``target_ratio=0.1``: 10^5 centroids, the exact gradient of their posterior every step);
* ``n_jobs``: the default logistic fit on 10^6 x 50 float32 rows with ``n_jobs=2``, beside
  ``n_jobs=1``.

Each case runs in a fresh interpreter (workers, imports and page cache as a user meets them),
with the package found on ``--tree`` (a checkout's root; default: the installed package), so the
same script times an older commit (``git worktree add /tmp/before <commit>``; ``--tree
/tmp/before``).  ``--compare JSON`` puts an earlier run's figures beside this one's.  ``--quick``:
a few thousand rows.

    python benchmarks/bench_slowdowns.py [--quick] [--tree DIR] [--compare JSON]
        [--json PATH] [--markdown PATH]
"""

import json
import os
import subprocess
import sys
import time

from _common import cli, header, write_json, write_markdown

FULL = {"softmax_200": {"n": 20_000, "d": 20, "classes": 200},
        "compressed": {"n": 1_000_000, "d": 50}, "n_jobs": {"n": 1_000_000, "d": 50}}
QUICK = {"softmax_200": {"n": 2_000, "d": 5, "classes": 20},
         "compressed": {"n": 20_000, "d": 10}, "n_jobs": {"n": 20_000, "d": 10}}


def _data(n, d, classes=2, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float32)
    if classes > 2:
        z = X @ rng.normal(size=(d, classes)) / np.sqrt(d) + rng.gumbel(size=(n, classes))
        return X.astype(np.float64), z.argmax(1)
    return X, (X @ rng.normal(size=d) * 0.3 + rng.logistic(size=n) > 0).astype(int)


def child(case, size):
    """Fit one case, print one JSON line: wall seconds and the fit's own figures."""
    import warnings

    import numpy as np

    from skbayes_sg import BayesianLogisticRegression

    X, y = _data(size["n"], size["d"], size.get("classes", 2))
    runs = [{"n_jobs": 1}, {"n_jobs": 2}] if case == "n_jobs" else [{}]
    out = {}
    for kw in runs:
        if case == "compressed":
            kw = {"subsampling": "compressed"}
        est = BayesianLogisticRegression(random_state=0, **kw)
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, y)
        d = est.diagnostics_
        out[json.dumps(kw)] = {
            "fit_seconds": time.perf_counter() - t0,
            "sampling_seconds": d["sampling_seconds"],
            "preprocessing_seconds": d["preprocessing_seconds"],
            "n_doublings": d["n_doublings"], "max_rhat": float(np.nanmax(d["rhat"])),
            "data_passes": d["data_passes"], "warned": bool(caught),
            "worker_groups": d.get("worker_groups")}
    print("RESULT " + json.dumps(out), flush=True)


def run(case, size, tree, timeout=1800):
    """``child(case)`` in a fresh interpreter on ``tree``; its record, or a failure."""
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = os.pathsep.join([tree, env.get("PYTHONPATH", "")])
    p = subprocess.run([sys.executable, __file__, "--child", json.dumps([case, size])],
                       capture_output=True, text=True, timeout=timeout, env=env)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    if p.returncode or not lines:
        return {"error": p.stderr.strip().splitlines()[-1:]}
    return json.loads(lines[-1][len("RESULT "):])


def markdown(args, result, before):
    note = ("Each case in a fresh process; wall seconds of `fit`, sampling seconds, doublings, "
            "max R-hat and the warning flag from the fit itself. 'before' is the same script "
            f"run with --tree on the older checkout ({args.compare}).")
    lines = [header("Three slowdowns of default fits, before and after", args, seeds=[0],
                    repeats=1, note=note),
             "| case | settings | fit s (before) | fit s | sampling s (before) | sampling s | "
             "doublings (before / after) | max R-hat (before / after) |",
             "|---|---|---|---|---|---|---|---|"]
    for case, runs in result.items():
        for kw, r in runs.items():
            if "fit_seconds" not in r:
                continue
            b = before.get(case, {}).get(kw, {})
            lines.append(
                f"| {case} | `{kw}` | {b.get('fit_seconds', float('nan')):.2f} | "
                f"{r['fit_seconds']:.2f} | {b.get('sampling_seconds', float('nan')):.2f} | "
                f"{r['sampling_seconds']:.2f} | {b.get('n_doublings', '—')} / "
                f"{r['n_doublings']} | {b.get('max_rhat', float('nan')):.3f} / "
                f"{r['max_rhat']:.3f} |")
    return "\n".join(lines) + "\n"


def main():
    args = cli(__doc__, tree={"default": None}, compare={"default": None},
               child={"default": None})
    if args.child:
        child(*json.loads(args.child))
        return
    sizes = QUICK if args.quick else FULL
    result = {case: run(case, size, args.tree) for case, size in sizes.items()}
    print(json.dumps(result, indent=2))
    before = {}
    if args.compare:
        with open(args.compare) as f:
            before = json.load(f).get("result", {})
    write_json(args.json, {"sizes": sizes, "tree": args.tree, "result": result})
    write_markdown(args.markdown, markdown(args, result, before))


if __name__ == "__main__":
    main()
