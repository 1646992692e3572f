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
where those are importable: they are not the arena's). Where tf2_ros is importable, also every
other name ``from tf2_ros import *`` gives (``TransformStamped``, ``PoseStamped``, ``Duration``,
``Time``, ...: what tf2_ros's modules import), as tf2_ros's own objects, so code that writes
``tf2_ros.TransformStamped()`` or relies on ``from tf2_ros import *`` ports too.

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

from . import buffer_interface as _buffer_interface


def _tf2_ros_names() -> list:
    """Every name ``from tf2_ros import *`` gives (tf2_ros has no ``__all__``: its public
    names); those tf_shm does not define are bound here to tf2_ros's objects."""
    import sys

    tf2_ros = sys.modules.get("tf2_ros") if _buffer_interface.FROM_TF2_ROS else None
    if tf2_ros is None:
        return []
    names = [n for n in vars(tf2_ros) if not n.startswith("_")]
    ours = globals()
    for n in names:
        ours.setdefault(n, getattr(tf2_ros, n))
    return names


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
__all__ += [n for n in _tf2_ros_names() if n not in __all__]
