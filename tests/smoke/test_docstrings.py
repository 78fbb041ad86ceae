"""The doctest examples in the package's docstrings run and give what they show.

Every module whose source contains ``>>>`` is collected (at least the three
estimators); modules without examples are not imported here.
"""

import doctest
import importlib
import pkgutil
import warnings
from pathlib import Path

import pytest

import skbayes_sg

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules_with_examples():
    found = []
    for info in pkgutil.walk_packages(skbayes_sg.__path__, prefix="skbayes_sg."):
        if info.ispkg:
            path = Path(info.module_finder.path) / info.name.rsplit(".", 1)[1] / "__init__.py"
        else:
            path = Path(info.module_finder.path) / (info.name.rsplit(".", 1)[1] + ".py")
        if path.is_file() and ">>>" in path.read_text(encoding="utf-8"):
            found.append(info.name)
    return sorted(found)


MODULES = _modules_with_examples()


def test_the_estimators_have_examples():
    for name in ("_logistic", "_linear", "_mlp"):
        assert f"skbayes_sg.estimators.{name}" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short example chains warn about convergence
        result = doctest.testmod(module, optionflags=FLAGS, verbose=False, report=True)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
