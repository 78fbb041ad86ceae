"""No module-level mutable state: every module of the package is imported and each of its
global values must be immutable (constants, read-only registries, frozen records, functions and
classes).  Tuned thresholds live in frozen records (``FitConfig``, ``ModeConfig``) or are
arguments with module defaults, so a test never needs to patch a module.
"""

import array
import collections
import dataclasses
import enum
import importlib
import pkgutil
import threading
import types

import numpy as np
import pytest

import skbayes_sg

# mutable kinds of the standard library and numpy (a writeable array is one too)
_MUTABLE = (list, dict, set, bytearray, array.array, collections.deque, types.SimpleNamespace,
            threading.local)
_PENDING = frozenset()  # (module, name) pairs allowed to stay mutable: none


def _immutable(value):
    """Whether ``value`` cannot be changed in place (recursively for containers and records).

    Functions, classes, modules and other libraries' objects (ufuncs, scipy distributions,
    typing forms, scikit-learn's constraints) pass; the package's own objects must be frozen
    dataclasses, named tuples or enum members, with immutable fields.
    """
    if isinstance(value, _MUTABLE):
        return False
    if isinstance(value, np.ndarray):
        return not value.flags.writeable
    if isinstance(value, (tuple, frozenset)):
        return all(_immutable(v) for v in value)
    if isinstance(value, types.MappingProxyType):
        return all(_immutable(k) and _immutable(v) for k, v in value.items())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.__dataclass_params__.frozen and all(
            _immutable(getattr(value, f.name)) for f in dataclasses.fields(value))
    own = type(value).__module__.startswith("skbayes_sg")
    return not own or isinstance(value, enum.Enum)


def _modules():
    names = [info.name for info in pkgutil.walk_packages(skbayes_sg.__path__, "skbayes_sg.")]
    return ["skbayes_sg", *sorted(names)]


def _mutable_globals(module):
    return sorted(name for name, value in vars(module).items()
                  if not (name.startswith("__") and name.endswith("__"))
                  and (module.__name__, name) not in _PENDING and not _immutable(value))


@pytest.mark.parametrize("name", _modules())
def test_module_holds_no_mutable_state(name):
    module = importlib.import_module(name)
    assert _mutable_globals(module) == [], (
        f"{name} holds mutable module-level values; make registries MappingProxyType or "
        "tuples, and move tuned values into a frozen record or a keyword argument")


def test_the_check_catches_mutable_values():
    # oracle: a module with one value of each mutable kind, and immutable ones beside them
    @dataclasses.dataclass
    class Loose:
        x: int = 0

    @dataclasses.dataclass(frozen=True)
    class Frozen:
        x: tuple = ()

    module = types.ModuleType("fake")
    mutable = {"a": [], "b": {}, "c": set(), "d": bytearray(), "e": Loose(), "f": np.zeros(2),
               "g": (1, []), "h": types.MappingProxyType({"k": []}), "i": Frozen(([],)),
               "j": threading.local(), "k": collections.OrderedDict()}
    readonly = np.zeros(2)
    readonly.flags.writeable = False
    immutable = {"l": (1, "x"), "m": types.MappingProxyType({"k": int}), "n": Frozen((1,)),
                 "o": np.dtype(float), "p": len, "q": frozenset({1}), "r": readonly}
    vars(module).update(mutable, **immutable)
    assert _mutable_globals(module) == sorted(mutable)
