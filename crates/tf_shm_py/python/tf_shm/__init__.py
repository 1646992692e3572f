"""tf_shm for Python: tf2_ros's ``Buffer``, answered from the shared-memory arena that
``tf_shm_bridge`` fills from /tf and /tf_static.

Porting a tf2_ros node is a change of imports::

    from tf_shm import Buffer, TransformListener          # was: from tf2_ros import ...
    from tf_shm import LookupException                     # tf2_py's own class where importable

Results are ``T_target_source`` (points in the source frame into the target frame),
translations in metres, quaternions x, y, z, w, stamps in ns where not messages.
"""

from ._errors import (
    ConnectivityException,
    ExtrapolationException,
    InvalidArgumentException,
    LookupException,
    TimeoutException,
    TransformException,
)
from ._messages import TransformResult
from ._native import OpenError
from .buffer import Buffer
from .listener import StaticTransformListener, TransformListener

__all__ = [
    "Buffer",
    "ConnectivityException",
    "ExtrapolationException",
    "InvalidArgumentException",
    "LookupException",
    "OpenError",
    "StaticTransformListener",
    "TimeoutException",
    "TransformException",
    "TransformListener",
    "TransformResult",
]
