"""Fitting: the steps of ``fit`` shared by the estimators."""

from ._compat import check_combination

__all__ = ["check_combination"]
