"""Estimator settings of the test fits.

``FAST`` is the one setting of a fit whose draws a test looks at; ``QUICK`` is for fits whose
draws do not matter (error messages, parameter checks, scikit-learn's estimator checks).  A test
that needs another value says so in the call (``dict(FAST, batch_size=100)``).
"""

FAST = dict(n_warmup=100, n_draws=100, n_chains=2, random_state=0)
QUICK = dict(n_warmup=20, n_draws=20, n_chains=1, random_state=0)
SUBSAMPLED = dict(FAST, batch_size=100)  # fits that must subsample the 569 (or fewer) rows
