"""``warn_user``: warnings that point at the user's line, not at the library's.

``warnings.warn(..., stacklevel=k)`` needs the depth of the caller's frame, which differs between
``est.fit(X, y)``, ``Pipeline.fit``, ``cross_val_score`` and ``GridSearchCV`` (scikit-learn's
``_fit_context`` wrapper, the pipeline and joblib's sequential backend add frames).  The helper
walks the stack instead and reports the first frame whose module is outside ``skbayes_sg``,
scikit-learn and joblib: the line of the user's script that started the call.
"""

import sys
import warnings

__all__ = ["user_stacklevel", "warn_user"]

_INTERNAL = frozenset({"skbayes_sg", "sklearn", "joblib"})


def _internal(frame):
    """Whether ``frame`` runs code of one of the :data:`_INTERNAL` packages."""
    return frame.f_globals.get("__name__", "").partition(".")[0] in _INTERNAL


def user_stacklevel(depth=1):
    """``stacklevel`` of the first frame outside the library, seen from ``depth`` frames up.

    Parameters
    ----------
    depth : int, default=1
        ``1`` when called from the function that calls ``warnings.warn`` itself.

    Returns
    -------
    stacklevel : int
        For ``warnings.warn`` in the function ``depth`` frames above this one; 2 (its caller)
        when every frame is internal (e.g. code run from the library's own modules).
    """
    frame, level = sys._getframe(depth + 1), 2
    while frame is not None and _internal(frame):
        frame, level = frame.f_back, level + 1
    return 2 if frame is None else level


def warn_user(message, category=UserWarning):
    """``warnings.warn(message, category)`` attributed to the user's line.

    Parameters
    ----------
    message : str
    category : type of Warning, default=UserWarning
    """
    warnings.warn(message, category, stacklevel=user_stacklevel())
