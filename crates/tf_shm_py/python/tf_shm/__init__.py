"""tf_shm for Python: tf2_ros's ``Buffer``, answered from the shared-memory arena that
``tf_shm_bridge`` fills from /tf and /tf_static.

Porting a tf2_ros node is replacing ``tf2_ros`` by ``tf_shm``, in any import form::

    from tf_shm import Buffer, TransformListener          # was: from tf2_ros import ...
    from tf_shm.transform_listener import TransformListener
    from tf_shm.buffer import Buffer
    from tf_shm import LookupException                     # tf2_py's own class where importable

The package has tf2_ros's modules (``buffer``, ``buffer_interface``, ``buffer_client``,
``transform_listener``, ``transform_broadcaster``, ``static_transform_broadcaster``) and every
class and function ``tf2_ros`` exports (tf2_py's ``BufferCore`` and tf2_ros's ``BufferClient``
where those are importable: they are not the arena's).

Results are ``T_target_source`` (points in the source frame into the target frame),
translations in metres, quaternions x, y, z, w, stamps in ns where not messages.
"""

import contextlib

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
from .buffer_client import *  # tf2_ros's BufferClient where importable
from .buffer_interface import (
    BufferInterface,
    ConvertRegistration,
    NotImplementedException,
    Stamped,
    TransformRegistration,
    TypeException,
    convert,
)
from .static_transform_broadcaster import StaticTransformBroadcaster
from .transform_broadcaster import TransformBroadcaster
from .transform_listener import StaticTransformListener, TransformListener

with contextlib.suppress(Exception):  # without tf2_py there is no writable core to export
    from tf2_py import BufferCore  # noqa: F401 - tf2's own writable core, as tf2_ros exports it

__all__ = [
    "Buffer",
    "BufferInterface",
    "ConnectivityException",
    "ConvertRegistration",
    "ExtrapolationException",
    "InvalidArgumentException",
    "LookupException",
    "NotImplementedException",
    "OpenError",
    "Stamped",
    "StaticTransformBroadcaster",
    "StaticTransformListener",
    "TimeoutException",
    "TransformBroadcaster",
    "TransformException",
    "TransformListener",
    "TransformRegistration",
    "TransformResult",
    "TypeException",
    "convert",
]
