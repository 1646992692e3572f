"""``tf_shm.buffer_interface``: tf2_ros's ``buffer_interface`` module.

Where tf2_ros is importable these are tf2_ros's own objects (``BufferInterface``,
``TransformRegistration``, ``TypeException``, ...), so a :class:`tf_shm.Buffer` is a
``tf2_ros.BufferInterface`` and ``transform()`` finds every type tf2_geometry_msgs,
tf2_sensor_msgs or the user registered (after importing them, as with tf2_ros). Without tf2_ros,
classes of the same names and behaviour, whose registry already holds tf2_geometry_msgs' types
(``PointStamped``, ``Vector3Stamped``, ``PoseStamped``, ``PoseWithCovarianceStamped``,
``PolygonStamped``) and ``TransformStamped`` (composed), computed by tf_shm's native code.
``TF_SHM_OWN_BUFFER_INTERFACE=1`` picks the built-in classes even where tf2_ros is importable.
"""

from __future__ import annotations

import os
from copy import deepcopy
from typing import Any, Callable, ClassVar

from . import _transform

__all__ = [
    "BufferInterface",
    "ConvertRegistration",
    "NotImplementedException",
    "Stamped",
    "TransformRegistration",
    "TypeException",
    "convert",
]


def _tf2_ros() -> Any:
    if os.environ.get("TF_SHM_OWN_BUFFER_INTERFACE", "") not in ("", "0"):
        return None
    try:
        from tf2_ros import buffer_interface
    except Exception:  # noqa: BLE001 - any failure to import means "not usable here"
        return None
    return buffer_interface


_upstream = _tf2_ros()

if _upstream is not None:
    BufferInterface = _upstream.BufferInterface
    ConvertRegistration = _upstream.ConvertRegistration
    NotImplementedException = _upstream.NotImplementedException
    Stamped = _upstream.Stamped
    TransformRegistration = _upstream.TransformRegistration
    TypeException = _upstream.TypeException
    convert = _upstream.convert
    FROM_TF2_ROS = True
else:
    FROM_TF2_ROS = False

    class TypeException(Exception):  # type: ignore[no-redef]
        """An object whose type no transform is registered for (tf2_ros's ``TypeException``);
        the text is in ``errstr``."""

        def __init__(self, errstr: str) -> None:
            self.errstr = errstr

    class NotImplementedException(Exception):  # type: ignore[no-redef]
        """tf2_ros's ``NotImplementedException`` (an interface method not implemented)."""

        def __init__(self) -> None:
            self.errstr = "CanTransform or LookupTransform not implemented"

    class TransformRegistration:  # type: ignore[no-redef]
        """tf2_ros's registry of ``do_transform(obj, transform_stamped)`` functions by type
        (one map shared by every instance)."""

        _type_map: ClassVar[dict[Any, Callable[[Any, Any], Any]]] = {}

        def print_me(self) -> None:
            print(TransformRegistration._type_map)

        def add(self, key: Any, callback: Callable[[Any, Any], Any]) -> None:
            TransformRegistration._type_map[key] = callback

        def get(self, key: Any) -> Callable[[Any, Any], Any]:
            if key not in TransformRegistration._type_map:
                raise TypeException(f"Type {key!s} is not loaded or supported")
            return TransformRegistration._type_map[key]

    class ConvertRegistration:  # type: ignore[no-redef]
        """tf2_ros's registry of message conversions (empty unless the user adds some)."""

        _to_msg: ClassVar[dict[Any, Callable[[Any], Any]]] = {}
        _from_msg: ClassVar[dict[Any, Callable[[Any], Any]]] = {}
        _convert: ClassVar[dict[Any, Callable[[Any], Any]]] = {}

        def add_from_msg(self, key: Any, callback: Callable[[Any], Any]) -> None:
            ConvertRegistration._from_msg[key] = callback

        def add_to_msg(self, key: Any, callback: Callable[[Any], Any]) -> None:
            ConvertRegistration._to_msg[key] = callback

        def add_convert(self, key: Any, callback: Callable[[Any], Any]) -> None:
            ConvertRegistration._convert[key] = callback

        @staticmethod
        def _get(table: dict[Any, Any], key: Any) -> Any:
            if key not in table:
                raise TypeException(f"Type {key!s} is not loaded or supported")
            return table[key]

        def get_from_msg(self, key: Any) -> Callable[[Any], Any]:
            return self._get(ConvertRegistration._from_msg, key)

        def get_to_msg(self, key: Any) -> Callable[[Any], Any]:
            return self._get(ConvertRegistration._to_msg, key)

        def get_convert(self, key: Any) -> Callable[[Any], Any]:
            return self._get(ConvertRegistration._convert, key)

    def convert(a: Any, b_type: Any) -> Any:  # type: ignore[no-redef]
        """tf2_ros's ``convert``: a registered conversion, a copy for the same type, else
        through the to/from message conversions (``TypeException`` if none)."""
        c = ConvertRegistration()
        try:
            return c.get_convert((type(a), b_type))(a)
        except TypeException:
            if type(a) is b_type:
                return deepcopy(a)
            return c.get_from_msg(b_type)(c.get_to_msg(type(a))(a))

    def Stamped(obj: Any, stamp: Any, frame_id: str) -> Any:  # type: ignore[no-redef]
        """tf2_ros's ``Stamped``: sets ``obj.header`` to ``Header(frame_id, stamp)``."""
        from std_msgs.msg import Header

        obj.header = Header(frame_id=frame_id, stamp=stamp)
        return obj

    class BufferInterface:  # type: ignore[no-redef]
        """tf2_ros's ``BufferInterface``: ``transform`` / ``transform_full`` through the
        :class:`TransformRegistration`, on top of the subclass's lookups."""

        def __init__(self) -> None:
            self.registration = TransformRegistration()

        def transform(
            self, object_stamped: Any, target_frame: str, timeout: Any = 0, new_type: Any = None
        ) -> Any:
            """``object_stamped`` in ``target_frame`` at its own stamp; ``TypeException`` for
            a type without a registered transform; converted to ``new_type`` if given."""
            do_transform = self.registration.get(type(object_stamped))
            h = object_stamped.header
            res = do_transform(
                object_stamped, self.lookup_transform(target_frame, h.frame_id, h.stamp, timeout)
            )
            return res if new_type is None else convert(res, new_type)

        def transform_full(
            self,
            object_stamped: Any,
            target_frame: str,
            target_time: Any,
            fixed_frame: str,
            timeout: Any = 0,
            new_type: Any = None,
        ) -> Any:
            """As :meth:`transform`, through the two-time lookup via ``fixed_frame``."""
            do_transform = self.registration.get(type(object_stamped))
            h = object_stamped.header
            res = do_transform(
                object_stamped,
                self.lookup_transform_full(
                    target_frame, target_time, h.frame_id, h.stamp, fixed_frame, timeout
                ),
            )
            return res if new_type is None else convert(res, new_type)

        def lookup_transform(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedException()

        def lookup_transform_full(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedException()

        def can_transform(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedException()

        def can_transform_full(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedException()

    _transform.register_builtin(TransformRegistration())
