"""``get_params`` / ``set_params`` for sampler and strategy objects.

Samplers and subsampling strategies are plain hyperparameter holders, like
scikit-learn estimators: ``__init__`` stores its keyword arguments verbatim.
This mixin gives them the parameter protocol that :func:`sklearn.base.clone`
and :class:`~sklearn.model_selection.GridSearchCV` (``sampler__friction``,
``subsampling__n_clusters``) rely on, without making them estimators.
"""

import inspect

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
        """Return the hyperparameters as a dict (``deep`` is accepted for sklearn)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set hyperparameters; unknown names raise a ValueError naming the valid ones."""
        valid = self._get_param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(
                    f"Invalid parameter {key!r} for {type(self).__name__}; "
                    f"valid parameters are {valid}."
                )
            setattr(self, key, value)
        return self

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
