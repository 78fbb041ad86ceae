"""Beyond one machine: a default fit on 10^8 x 20 float32 rows stored on disk, on Dask (issue 18).

Data: ``--rows`` rows (default 10^8, 8 GB) x 20 float32 features and int8 labels from a logistic
model, written by the workers as ``.npy`` blocks of ``--chunk-rows`` rows under ``--work-dir``
(reused when present).  X is a dask array whose chunks are those files memory-mapped, so a pass
streams them from disk (or the page cache) and a gather reads only its rows.

Cluster: a ``LocalCluster`` of 2 worker processes, 1 thread each, ``--memory-limit`` each (default
3 GB: together below the data).  The client only ever holds index blocks and gathered minibatch
pieces.

Fit: ``BayesianLogisticRegression(random_state=0)`` with its defaults.  Reported: wall seconds by
phase (data validation, mode, Laplace, strategy build, gradient-noise pilots, sampling, extension
of unconverged chains, other), data
passes (per-example evaluations / N) and the map-reduce passes actually run, gathered rows, the
client's peak memory (traced Python allocations during fit, and peak RSS of the process, which
also hosts the scheduler) and each worker's peak RSS (sampled every 0.5 s; file pages of the
memory-mapped chunks count there), and the accuracy against the Laplace approximation at the
exact mode (an independent Newton run to a 1e-12 decrement): the largest |posterior mean - mode|
and the range of posterior sd / Laplace sd, in Laplace sds.

Beside it: the in-memory fit of the first ``--slice-rows`` rows (default 10^7, in a subprocess
that loads them) with its time and peak RSS, and the extrapolation of that in-memory fit to all
rows (time x rows / slice rows; memory: X itself plus the slice's extra per row).

    python benchmarks/bench_dask.py [--rows 100000000] [--chunk-rows 2000000] [--work-dir DIR]
        [--memory-limit 3GB] [--slice-rows N] [--json PATH] [--markdown PATH]

``--quick``: 2 x 10^5 rows in chunks of 5 x 10^4 under ``<work-dir>_quick`` (the test suite's
smoke run).
"""

import json
import os
import subprocess
import sys
import threading
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import cli, header, peak_rss_mib, write_json, write_markdown  # noqa: E402

D, SEED = 20, 0
W = np.linspace(-1.0, 1.0, D).astype(np.float32)


def write_block(work_dir, k, rows, chunk_rows):
    """Block ``k`` of X and y as ``.npy`` files (deterministic; skipped when present)."""
    n = min(chunk_rows, rows - k * chunk_rows)
    xp, yp = Path(work_dir) / f"X_{k:05d}.npy", Path(work_dir) / f"y_{k:05d}.npy"
    if xp.exists() and yp.exists() and np.load(xp, mmap_mode="r").shape == (n, D):
        return n
    rng = np.random.default_rng([SEED, k])
    X = np.lib.format.open_memmap(xp.with_suffix(".tmp"), "w+", np.float32, (n, D))
    y = np.empty(n, np.int8)
    for s in range(0, n, 1 << 20):
        Z = rng.standard_normal((min(1 << 20, n - s), D), dtype=np.float32)
        X[s:s + len(Z)] = Z
        y[s:s + len(Z)] = rng.random(len(Z)) < 1.0 / (1.0 + np.exp(-(Z @ W + 0.5)))
    X.flush()
    del X
    os.replace(xp.with_suffix(".tmp"), xp)
    np.save(yp, y)
    return n


def dask_arrays(work_dir, sizes):
    """X and y as dask arrays of memory-mapped blocks."""
    import dask
    import dask.array as da

    load = dask.delayed(np.load, pure=True)
    X = da.concatenate([da.from_delayed(load(str(Path(work_dir) / f"X_{k:05d}.npy"), "r"),
                                        (n, D), np.float32) for k, n in enumerate(sizes)])
    y = da.concatenate([da.from_delayed(load(str(Path(work_dir) / f"y_{k:05d}.npy"), "r"),
                                        (n,), np.int8) for k, n in enumerate(sizes)])
    return X, y


class WorkerMemory:
    """Peak RSS of every worker, sampled every ``period`` seconds in a thread."""

    def __init__(self, client, period=0.5):
        self.client, self.period, self.peak, self._stop = client, period, {}, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @staticmethod
    def _rss():
        import psutil

        return psutil.Process().memory_info().rss

    def _run(self):
        while not self._stop.is_set():
            try:
                for w, rss in self.client.run(self._rss).items():
                    self.peak[w] = max(self.peak.get(w, 0), rss)
            except Exception:  # noqa: BLE001 - a worker restarting must not stop the sampling
                pass
            self._stop.wait(self.period)

    def stop(self):
        self._stop.set()
        self.thread.join()
        return {w: v / 2**20 for w, v in self.peak.items()}


def accuracy(est, posterior):
    """Fit vs the Laplace approximation at the exact mode, in Laplace sds."""
    from skbayes_sg.preprocessing import laplace_at
    from skbayes_sg.preprocessing._newton import newton_mode

    res = newton_mode(posterior, tol=1e-12)
    lap, _ = laplace_at(posterior, res.theta, "auto", res.hessian)
    sd = np.sqrt(lap.variances)
    draws = est.draws_.reshape(-1, est.draws_.shape[-1])
    return {"max_mean_error_sd": float(np.max(np.abs(draws.mean(0) - res.theta) / sd)),
            "sd_ratio_min": float((draws.std(0) / sd).min()),
            "sd_ratio_max": float((draws.std(0) / sd).max()),
            "mode_error_sd": float(np.max(np.abs(est.mode_ - res.theta) / sd))}


def slice_child(work_dir, sizes, rows):
    """In a subprocess: load the first ``rows`` rows and fit in memory; print JSON."""
    from skbayes_sg import BayesianLogisticRegression

    X, y, got = np.empty((rows, D), np.float32), np.empty(rows, np.int8), 0
    for k, n in enumerate(sizes):
        m = min(n, rows - got)
        X[got:got + m] = np.load(Path(work_dir) / f"X_{k:05d}.npy", mmap_mode="r")[:m]
        y[got:got + m] = np.load(Path(work_dir) / f"y_{k:05d}.npy")[:m]
        got += m
        if got == rows:
            break
    base = peak_rss_mib()
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = BayesianLogisticRegression(random_state=0).fit(X, y)
    d = est.diagnostics_
    print(json.dumps({"rows": rows, "seconds": time.perf_counter() - t,
                      "preprocessing_seconds": d["preprocessing_seconds"],
                      "sampling_seconds": d["sampling_seconds"], "data_passes": d["data_passes"],
                      "X_mib": X.nbytes / 2**20,
                      "fit_extra_mib": peak_rss_mib()
                      - base}))


def main():
    args = cli(__doc__, rows={"type": int, "default": 10**8},
               chunk_rows={"type": int, "default": 2_000_000},
               work_dir={"default": "/tmp/skbayes_sg_bench_dask"},
               memory_limit={"default": "3GB"}, slice_rows={"type": int, "default": None},
               slice_child={"action": "store_true", "help": argparse_hidden()})
    if args.quick:  # smoke run of its own, never over the full run's blocks
        args.rows, args.chunk_rows = 200_000, 50_000
        args.work_dir = args.work_dir.rstrip("/") + "_quick"
    rows = args.rows
    chunk = min(args.chunk_rows, rows)
    sizes = [min(chunk, rows - s) for s in range(0, rows, chunk)]
    slice_rows = args.slice_rows or min(10**7, max(rows // 10, 1))
    if args.slice_child:
        return slice_child(args.work_dir, sizes, slice_rows)
    run(args, rows, chunk, sizes, slice_rows)


def argparse_hidden():
    import argparse

    return argparse.SUPPRESS


def run(args, rows, chunk, sizes, slice_rows):
    import distributed

    from skbayes_sg import BayesianLogisticRegression
    from skbayes_sg.dask import DaskPosterior

    Path(args.work_dir).mkdir(parents=True, exist_ok=True)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit=args.memory_limit, dashboard_address=None)
    client = distributed.Client(cluster)
    t = time.perf_counter()
    client.gather(client.map(write_block, [args.work_dir] * len(sizes), range(len(sizes)),
                             [rows] * len(sizes), [chunk] * len(sizes), pure=False))
    gen_seconds = time.perf_counter() - t
    X, y = dask_arrays(args.work_dir, sizes)
    memory = WorkerMemory(client)
    tracemalloc.start()
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = BayesianLogisticRegression(random_state=0).fit(X, y)
    fit_seconds = time.perf_counter() - t
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    workers = memory.stop()
    posterior = DaskPosterior(est.model_, est.prior_, X.rechunk({1: -1}),
                              np.where(y == 1, 1.0, -1.0).astype(np.float64))
    acc = accuracy(est, posterior)
    client.close()
    cluster.close()
    child = subprocess.run([sys.executable, __file__, "--slice-child", "--rows", str(rows),
                            "--chunk-rows", str(chunk), "--work-dir", args.work_dir,
                            "--slice-rows", str(slice_rows)], capture_output=True, text=True)
    mem = json.loads(child.stdout.strip().splitlines()[-1]) if child.returncode == 0 else {
        "error": child.stderr[-2000:]}
    d = est.diagnostics_
    result = {
        "rows": rows, "features": D, "chunk_rows": chunk, "X_gib": rows * D * 4 / 2**30,
        "memory_limit_per_worker": args.memory_limit, "generate_seconds": gen_seconds,
        "fit_seconds": fit_seconds,
        "phase_seconds": {**{k: v["seconds"] for k, v in d["phases"].items()},
                          "other (validation, summaries)": fit_seconds - sum(
                              v["seconds"] for v in d["phases"].values())},
        "data_passes": d["data_passes"],
        "batch_size": d["batch_size"], "step_size": d["step_size"],
        "subsampling": d.get("subsampling"),
        "rhat_max": float(np.max(d["rhat"])), "ess_min": float(np.min(d["ess"])),
        "client_traced_peak_mib": traced / 2**20,
        "client_peak_rss_mib": peak_rss_mib(),
        "worker_peak_rss_mib": workers, "accuracy_vs_laplace": acc,
        "warnings": sorted({str(w.message)[:160] for w in caught}),
        "in_memory_slice": mem,
    }
    if "seconds" in mem:
        factor = rows / mem["rows"]
        result["in_memory_extrapolated"] = {
            "seconds": mem["seconds"] * factor,
            "memory_gib": (mem["X_mib"] + mem["fit_extra_mib"]) * factor / 1024}
    print(json.dumps(result, indent=2))
    write_json(args.json, result)
    write_markdown(args.markdown, markdown(args, result))


def markdown(args, r):
    lines = [header("Dask: a default fit beyond one machine's memory", args, seeds=[SEED],
                    repeats=1), "| quantity | value |", "|---|---|"]
    rows = [("rows x features (float32)", f"{r['rows']:,} x {r['features']} "
             f"({r['X_gib']:.2f} GiB), chunks of {r['chunk_rows']:,} rows"),
            ("workers", f"2 processes x 1 thread, memory limit {r['memory_limit_per_worker']}"),
            ("fit wall seconds", f"{r['fit_seconds']:.1f}"),
            *[(f"  {k}", f"{v:.1f}") for k, v in r["phase_seconds"].items()],
            ("data passes (evaluations / N)", f"{r['data_passes']:.2f}"),
            ("subsampling that ran (default \"auto\")", r.get("subsampling") or "—"),
            ("batch size, step size", f"{r['batch_size']}, {r['step_size']:.3g}"),
            ("max R-hat, min bulk ESS", f"{r['rhat_max']:.3f}, {r['ess_min']:.0f}"),
            ("client traced peak (MiB)", f"{r['client_traced_peak_mib']:.0f}"),
            ("client peak RSS, scheduler included (MiB)", f"{r['client_peak_rss_mib']:.0f}"),
            ("worker peak RSS (MiB)", ", ".join(f"{v:.0f}" for v in
                                               r["worker_peak_rss_mib"].values())),
            *[(f"vs Laplace at exact mode: {k}", f"{v:.3g}")
              for k, v in r["accuracy_vs_laplace"].items()]]
    s = r["in_memory_slice"]
    if "seconds" in s:
        e = r["in_memory_extrapolated"]
        rows += [(f"in-memory fit of {s['rows']:,} rows: seconds / passes / extra MiB",
                  f"{s['seconds']:.1f} / {s['data_passes']:.2f} / {s['fit_extra_mib']:.0f}"),
                 ("in-memory extrapolated to all rows: seconds / GiB",
                  f"{e['seconds']:.0f} / {e['memory_gib']:.1f}")]
    lines += [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
