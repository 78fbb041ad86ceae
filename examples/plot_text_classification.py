"""Text classification on sparse hashed features, with predictive uncertainty.
===========================================================================

``Pipeline(HashingVectorizer, BayesianLogisticRegression)`` on generated documents: two topics
("sports", "science") share a vocabulary of filler words; each topic has its own words.  The
vectorizer gives a CSR matrix of 2^14 hashed, l2-normalised features, which the estimator keeps
sparse (memory follows the stored entries, not rows x features); ``draws_dtype="float32"`` stores
the 16,385-coefficient draws in half the memory.  Three kinds of test documents:

* clear: written like the training documents -- confident, correct predictions;
* mixed: each topic word from either topic with probability 1/2 -- p(y=1|x) anywhere between
  0 and 1 as the draw of words falls, its spread over draws largest near 1/2;
* unseen: words never seen in training -- their hashed coefficients (bar a few hash collisions)
  keep the prior, so the posterior-predictive probability is near the base rate *and* its spread
  over posterior draws is large: the model says it does not know, where ``LogisticRegression``
  gives one number.

With this many coefficients the chains mix slowly and ``fit`` raises a ConvergenceWarning; the
predictive probabilities and their spread over draws, which the figure shows, barely move when
the chains run longer.

Set SKBAYES_SG_FAST=1 for a quick smoke run; SKBAYES_SG_FIGURES=<dir> moves the PNG.
"""

# %%
# The lines that matter::
#
#     clf = make_pipeline(HashingVectorizer(n_features=2**14),    # X stays sparse
#                         BayesianLogisticRegression(draws_dtype="float32", random_state=0))
#     proba = clf.fit(docs, y).predict_proba(new_docs)

import os
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from scipy.special import expit
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skbayes_sg import BayesianLogisticRegression

FAST = os.environ.get("SKBAYES_SG_FAST") == "1"
FIGURES = Path(os.environ.get("SKBAYES_SG_FIGURES") or Path(__file__).parent / "figures")
SHORT = dict(n_warmup=100, n_draws=100) if FAST else dict(n_draws=250)
# fewer than ~3,000 documents on 2^14 features would select the (slower) wide-data Laplace
N_TRAIN, N_TEST = (4_000, 150) if FAST else (5_000, 600)
matplotlib.use("Agg")  # write files, open no window

rng = np.random.default_rng(0)
WORDS = {name: [f"{name}{i}" for i in range(n)]
         for name, n in (("sport", 300), ("science", 300), ("filler", 2000), ("unseen", 500))}


def documents(n, mix):
    """``n`` documents of 20-40 words; a share ``mix`` of topic words is sport (else science)."""
    docs = []
    for _ in range(n):
        length = rng.integers(20, 41)
        topic = rng.random(length) < 0.3
        sport = rng.random(length) < mix
        zipf = np.minimum(rng.zipf(1.3, size=length), 300) - 1  # frequent words first
        filler = rng.integers(2000, size=length)
        words = [WORDS["sport" if s else "science"][z] if t else WORDS["filler"][f]
                 for t, s, z, f in zip(topic, sport, zipf, filler)]
        docs.append(" ".join(words))
    return docs


def unseen(n):
    return [" ".join(rng.choice(WORDS["unseen"], rng.integers(20, 41))) for _ in range(n)]


y_train = rng.integers(0, 2, N_TRAIN)
train = [documents(1, 0.9 if label else 0.1)[0] for label in y_train]
y_clear = rng.integers(0, 2, N_TEST)
tests = {"clear": [documents(1, 0.9 if label else 0.1)[0] for label in y_clear],
         "mixed": documents(N_TEST, 0.5), "unseen": unseen(N_TEST)}

vectorizer = HashingVectorizer(n_features=2**14, alternate_sign=False)
bayes = make_pipeline(vectorizer, BayesianLogisticRegression(draws_dtype="float32", random_state=0,
                                                             **SHORT))
bayes.fit(train, y_train)
point = make_pipeline(vectorizer, LogisticRegression(C=1.0)).fit(train, y_train)
X_train = vectorizer.transform(train)
print(f"{N_TRAIN} documents -> CSR {X_train.shape[0]} x {X_train.shape[1]}, "
      f"{X_train.nnz / X_train.shape[0]:.1f} stored entries a row "
      f"({X_train.data.nbytes / 2**20:.1f} MB; dense it would be "
      f"{X_train.shape[0] * X_train.shape[1] * 8 / 2**30:.1f} GB)")
d = bayes[-1].diagnostics_
print(f"fit: {d['preprocessing_seconds']:.1f} s preprocessing + {d['sampling_seconds']:.1f} s "
      f"sampling, {d['data_passes']:.1f} data passes")

post = bayes[-1].sample_posterior(200, random_state=0)
print("confidence = mean of max(p, 1 - p) over the documents; sd = of p over posterior draws")
print(f"{'test documents':<16}{'Bayes confidence':>18}{'Bayes sd':>10}{'LR confidence':>15}")
summary = {}
for kind, docs in tests.items():
    Xk = vectorizer.transform(docs)
    draws = expit(Xk @ post["coef"][:, 0, :].T + post["intercept"][:, 0])  # (n_docs, 200)
    p, p_lr = draws.mean(1), point.predict_proba(docs)[:, 1]
    summary[kind] = (p, draws.std(1))
    print(f"{kind:<16}{np.maximum(p, 1 - p).mean():>18.3f}{draws.std(1).mean():>10.3f}"
          f"{np.maximum(p_lr, 1 - p_lr).mean():>15.3f}")
accuracy = np.mean(bayes.predict(tests["clear"]) == y_clear)
print(f"accuracy on clear test documents: {accuracy:.3f}")

fig, ax = plt.subplots(figsize=(6.5, 4.5))
for (kind, (mean, sd)), colour in zip(summary.items(), ("tab:blue", "tab:orange", "tab:red")):
    ax.scatter(mean, sd, s=10, alpha=0.6, color=colour, label=kind)
ax.set(xlabel="posterior-predictive P(sport | document)", ylabel="sd of P(sport) over draws",
       title="Hashed text: what the model knows and what it does not")
ax.legend(title="test documents")
FIGURES.mkdir(parents=True, exist_ok=True)
fig.savefig(FIGURES / "text_classification.png", dpi=110, bbox_inches="tight")
print(f"figure: {FIGURES / 'text_classification.png'}")
