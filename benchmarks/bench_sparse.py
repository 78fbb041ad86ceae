"""Sparse X at text scale: hashed-feature logistic regression, N = 10^6 rows, p = 2^18 (issue 15).

Synthetic documents: 30-60 tokens each (Poisson(45), clipped) from a Zipf(1.1) vocabulary of
200,000 words, hashed with random signs into 2^18 buckets and l2-normalised (what
``HashingVectorizer`` produces); labels ``y ~ Bernoulli(sigmoid(x . w + b))`` from a sparse true
weight vector (2,000 of the 20,000 most frequent words, logits of sd 3).  80% train, 20% test.

``BayesianLogisticRegression(n_draws=100)``, every other setting at its default (sghmc,
preferential_cv, diagonal Laplace preconditioner -- ``"auto"`` above 500 parameters -- 4 chains,
500 warm-up steps): stored draws 4 x 100 x (2^18 + 1) x 8 B = 0.84 GB, the largest ``n_draws``
below 1 GB.  Reported: fit seconds split into preprocessing (mode by L-BFGS, weights, tuning) and
sampling, data passes, peak RSS against the bytes of X's stored entries, test accuracy and
log-loss.

Reference: a long run of the same posterior -- the default fit's batch size, a quarter of its
automatic step and 20 times the steps (``thin=20``) -- so Monte-Carlo error and most of the
step-size bias are gone.  The Laplace approximation is not used as the reference: most buckets
are seen in a few documents, where the logistic posterior is skewed, and its diagonal form ignores
the correlations between co-occurring words.  Errors are in reference-sd units, over the 1,000
most frequent buckets (data-dominated) and over all buckets.

    python benchmarks/bench_sparse.py [--quick] [--json PATH] [--markdown PATH]
"""

import time

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import accuracy_score, log_loss
from sklearn.preprocessing import normalize

from _common import cli, header, machine, peak_rss_mib, write_json, write_markdown
from skbayes_sg import BayesianLogisticRegression

VOCAB, ZIPF, N_INFORMATIVE, LOGIT_SD = 200_000, 1.1, 2_000, 3.0
FULL = {"n": 1_000_000, "d": 2**18, "n_draws": 100, "n_warmup": 500, "thin_ref": 20}
QUICK = {"n": 20_000, "d": 2**14, "n_draws": 20, "n_warmup": 50, "thin_ref": 2}


def make_text(n, d, seed=0, chunk=100_000):
    """``(X (n, d) CSR float64, y (n,) int, counts (d,))``: hashed l2-normalised documents."""
    rng = np.random.default_rng(seed)
    probs = 1.0 / np.arange(1, VOCAB + 1) ** ZIPF
    probs /= probs.sum()
    bucket, sign = rng.integers(0, d, VOCAB), rng.choice([-1.0, 1.0], VOCAB)
    w = np.zeros(d)
    words = rng.choice(20_000, N_INFORMATIVE, replace=False)
    np.add.at(w, bucket[words], sign[words] * rng.normal(size=N_INFORMATIVE))
    parts = []
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        lengths = np.clip(rng.poisson(45, m), 30, 60)
        tokens = rng.choice(VOCAB, size=int(lengths.sum()), p=probs)
        rows = np.repeat(np.arange(m), lengths)
        part = sp.csr_matrix((sign[tokens], (rows, bucket[tokens])), shape=(m, d))
        part.sum_duplicates()
        parts.append(normalize(part))
    X = sp.vstack(parts, format="csr")
    z = X @ w
    z *= LOGIT_SD / z.std()
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(z + 0.5)))).astype(int)
    return X, y, np.bincount(X.indices, minlength=d)


def _fit(X, y, **kwargs):
    clf = BayesianLogisticRegression(random_state=0, **kwargs)
    t0 = time.perf_counter()
    clf.fit(X, y)
    return clf, time.perf_counter() - t0


def _scores(clf, X, y):
    proba = clf.predict_proba(X)
    return {"accuracy": accuracy_score(y, proba.argmax(1)), "log_loss": log_loss(y, proba)}


def _errors(clf, ref, top):
    """Mean errors (reference sds) and sd ratios, on the ``top`` buckets and on all."""
    def moments(est):
        coef = est.sample_posterior()["coef"][:, 0]
        return coef.mean(0), coef.std(0)

    (m, s), (m_ref, s_ref) = moments(clf), moments(ref)
    z, ratio = np.abs(m - m_ref) / s_ref, s / s_ref
    out = {}
    for name, sel in (("top", top), ("all", slice(None))):
        q5, q50, q95 = np.quantile(ratio[sel], [0.05, 0.5, 0.95])
        out[name] = {"mean_err_median": float(np.median(z[sel])),
                     "mean_err_q95": float(np.quantile(z[sel], 0.95)),
                     "sd_ratio_q5": float(q5), "sd_ratio_median": float(q50),
                     "sd_ratio_q95": float(q95)}
    return out


def run(cfg):
    t0 = time.perf_counter()
    X, y, counts = make_text(cfg["n"], cfg["d"])
    gen_seconds, base_mb = time.perf_counter() - t0, peak_rss_mib()
    n_train = int(0.8 * cfg["n"])
    Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    clf, seconds = _fit(Xtr, ytr, n_draws=cfg["n_draws"], n_warmup=cfg["n_warmup"])
    fit_mb = peak_rss_mib()
    diag = clf.diagnostics_
    ref, ref_seconds = _fit(Xtr, ytr, n_draws=cfg["n_draws"], n_warmup=cfg["n_warmup"],
                            thin=cfg["thin_ref"], batch_size=int(diag["batch_size"]),
                            step_size=diag["step_size"] / 4)
    top = np.argsort(counts)[::-1][:1000]
    nnz_mb = (Xtr.data.nbytes + Xtr.indices.nbytes + Xtr.indptr.nbytes) / 2**20
    return {
        "n_rows": cfg["n"], "n_train": n_train, "n_features": cfg["d"],
        "nnz_per_row": Xtr.nnz / n_train, "nnz_mb": nnz_mb,
        "dense_gb": n_train * cfg["d"] * 8 / 2**30, "generate_seconds": gen_seconds,
        "fit_seconds": seconds, "preprocessing_seconds": diag["preprocessing_seconds"],
        "sampling_seconds": diag["sampling_seconds"], "data_passes": diag["data_passes"],
        "preprocessing_passes": diag["preprocessing_grad_evals"] / n_train,
        "sampling_passes": diag["sampling_grad_evals"] / n_train,
        "batch_size": diag["batch_size"], "step_size": diag["step_size"],
        "subsampling": diag.get("subsampling"),
        "draws_mb": clf.draws_.nbytes / 2**20, "rss_after_data_mb": base_mb,
        "rss_peak_fit_mb": fit_mb, "fit": _scores(clf, Xte, yte),
        "ess_median": float(np.median(diag["ess"])),
        "ref_ess_median": float(np.median(ref.diagnostics_["ess"])),
        "reference": {**_scores(ref, Xte, yte), "seconds": ref_seconds,
                      "data_passes": ref.diagnostics_["data_passes"]},
        "errors": _errors(clf, ref, top),
    }


def markdown(args, r):
    e, f, ref = r["errors"], r["fit"], r["reference"]
    rows = [
        ("rows (train) x features", f"{r['n_train']:,} x {r['n_features']:,} "
                                    f"({r['nnz_per_row']:.1f} entries a row)"),
        ("X stored entries / dense size", f"{r['nnz_mb']:.0f} MB / {r['dense_gb']:.0f} GB"),
        ("fit seconds (preprocessing + sampling)",
         f"{r['fit_seconds']:.1f} ({r['preprocessing_seconds']:.1f} + "
         f"{r['sampling_seconds']:.1f})"),
        ("data passes (preprocessing + sampling)",
         f"{r['data_passes']:.1f} ({r['preprocessing_passes']:.1f} + "
         f"{r['sampling_passes']:.1f})"),
        ("subsampling that ran (default \"auto\")", r.get("subsampling") or "—"),
        ("batch size, whitened step", f"{r['batch_size']}, {r['step_size']:.3g}"),
        ("peak RSS after data / after fit",
         f"{r['rss_after_data_mb']:.0f} MB / {r['rss_peak_fit_mb']:.0f} MB "
         f"(stored draws {r['draws_mb']:.0f} MB)"),
        ("test accuracy: fit / reference", f"{f['accuracy']:.4f} / {ref['accuracy']:.4f}"),
        ("test log-loss: fit / reference", f"{f['log_loss']:.4f} / {ref['log_loss']:.4f}"),
        ("reference run", f"{ref['seconds']:.0f} s, {ref['data_passes']:.0f} data passes"),
        ("median bulk ESS: fit / reference (MC error of a mean ~ 1 / sqrt(ESS) sd)",
         f"{r['ess_median']:.0f} / {r['ref_ess_median']:.0f}"),
    ]
    for name, label in (("top", "1,000 most frequent buckets"), ("all", "all buckets")):
        g = e[name]
        rows.append((f"{label}: abs. mean error median / 95% (ref. sd)",
                     f"{g['mean_err_median']:.3f} / {g['mean_err_q95']:.3f}"))
        rows.append((f"{label}: sd ratio 5% / median / 95%",
                     f"{g['sd_ratio_q5']:.3f} / {g['sd_ratio_median']:.3f} / "
                     f"{g['sd_ratio_q95']:.3f}"))
    lines = [header("Sparse hashed-text logistic regression", args, seeds=[0], repeats=1,
                    note=__doc__.strip().split("\n\n")[1]), "| quantity | value |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    return "\n".join(lines) + "\n"


def main():
    args = cli(__doc__)
    result = run(QUICK if args.quick else FULL)
    payload = {"machine": machine(), "quick": args.quick, "result": result}
    write_json(args.json, payload)
    text = markdown(args, result)
    write_markdown(args.markdown, text)
    print(text)


if __name__ == "__main__":
    main()
