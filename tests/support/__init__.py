"""Helpers shared by the tests, imported normally (``tests`` is on pytest's ``pythonpath``).

``problems``: toy posteriors and the per-chain generators that drive gradient estimators;
``oracles``: the exact conjugate posterior and the checks against it, Monte-Carlo unbiasedness;
``settings``: the estimator settings of fast test fits.
"""
