"""Former module of the listener; see :mod:`tf_shm.transform_listener`."""

from .transform_listener import StaticTransformListener, TransformListener

__all__ = ["StaticTransformListener", "TransformListener"]
