"""``get_params`` / ``set_params`` for sampler and strategy objects.

Samplers and subsampling strategies are plain hyperparameter holders, like scikit-learn estimators:
``__init__`` stores its keyword arguments verbatim.  This mixin gives them the parameter protocol
that :func:`sklearn.base.clone` and :class:`~sklearn.model_selection.GridSearchCV`
(``sampler__friction``, ``subsampling__n_clusters``) rely on, without making them estimators.
"""

import inspect

from sklearn.utils._param_validation import validate_parameter_constraints

__all__ = ["ParamsMixin"]


class ParamsMixin:
    """Parameter protocol from the ``__init__`` signature."""

    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(
            name
            for name, prm in sig.parameters.items()
            if name != "self" and prm.kind not in (prm.VAR_KEYWORD, prm.VAR_POSITIONAL)
        )

    def get_params(self, deep=True):
        """The hyperparameters as a dict; with ``deep``, nested ones as ``name__sub``."""
        out = {name: getattr(self, name) for name in self._get_param_names()}
        if deep:
            for name, value in list(out.items()):
                if isinstance(value, ParamsMixin):
                    out.update({f"{name}__{k}": v for k, v in value.get_params().items()})
        return out

    def set_params(self, **params):
        """Set hyperparameters (``name__sub`` reaches a nested object).

        Unknown names raise a ValueError naming the valid ones.
        """
        valid = self._get_param_names()
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for {type(self).__name__}; "
                    f"valid parameters are {valid}."
                )
            if not sub:
                setattr(self, name, value)
            elif isinstance(getattr(self, name), ParamsMixin):
                getattr(self, name).set_params(**{sub: value})
            else:
                raise ValueError(f"Cannot set {key!r}: {type(self).__name__}.{name} is "
                                 f"{getattr(self, name)!r}, not an object with parameters; "
                                 f"set {name} to an object first.")
        return self

    _parameter_constraints: dict = {}

    def validate(self):
        """Check every hyperparameter; raise a ValueError naming the bad one.

        ``fit`` calls it before any pass over the data.  The checks are the class's
        ``_parameter_constraints`` (scikit-learn's declarative constraints, as for the estimators);
        subclasses add cross-parameter and nested checks.
        """
        validate_parameter_constraints(self._parameter_constraints,
                                       self.get_params(deep=False),
                                       caller_name=type(self).__name__)

    def __repr__(self):
        sig = inspect.signature(type(self).__init__)
        shown = []
        for name in self._get_param_names():
            default = sig.parameters[name].default
            value = getattr(self, name)
            if default is inspect.Parameter.empty or repr(value) != repr(default):
                shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def __eq__(self, other):
        return type(self) is type(other) and self.get_params() == other.get_params()

    def __hash__(self):
        return hash((type(self).__name__, repr(self)))

