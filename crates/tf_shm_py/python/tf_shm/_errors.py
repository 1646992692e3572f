"""tf2's exception classes: tf2_py's own when it is importable, else classes of the same names
and hierarchy, so ``except tf2_ros.LookupException`` keeps working after a port."""

from __future__ import annotations

import importlib
import os

from . import _native

_NAMES = (
    "TransformException",
    "LookupException",
    "ConnectivityException",
    "ExtrapolationException",
    "InvalidArgumentException",
    "TimeoutException",
)


class TransformException(Exception):
    """Base class of tf2's errors (``tf2.TransformException``)."""


class LookupException(TransformException):
    """A frame is unknown, or the tree has a loop (``tf2.LookupException``)."""


class ConnectivityException(TransformException):
    """The frames are in different trees (``tf2.ConnectivityException``)."""


class ExtrapolationException(TransformException):
    """The time asked for is outside the data (``tf2.ExtrapolationException``)."""


class InvalidArgumentException(TransformException):
    """Empty or '/'-prefixed frame id, or a bad time (``tf2.InvalidArgumentException``)."""


class TimeoutException(TransformException):
    """A wait ran out of time (``tf2.TimeoutException``)."""


def _pick() -> tuple[type[BaseException], ...]:
    # TF_SHM_OWN_EXCEPTIONS=1 keeps tf_shm's own classes even where tf2_py is importable.
    if os.environ.get("TF_SHM_OWN_EXCEPTIONS", "") not in ("", "0"):
        return tuple(globals()[n] for n in _NAMES)
    # tf2_ros re-exports tf2_py's classes; tf2_py is the lighter import of the two.
    for module in ("tf2_py", "tf2_ros"):
        found = _classes_of(module)
        if found is not None:
            return found
    return tuple(globals()[n] for n in _NAMES)


def _classes_of(module: str) -> tuple[type[BaseException], ...] | None:
    try:
        mod = importlib.import_module(module)
        return tuple(getattr(mod, n) for n in _NAMES)
    except Exception:  # noqa: BLE001 - any failure to import means "not usable here"
        return None


CLASSES = _pick()
_native.set_exception_classes(*CLASSES)
# The names above now mean the classes raised.
globals().update(zip(_NAMES, CLASSES))
