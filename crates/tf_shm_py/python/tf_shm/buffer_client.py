"""``tf_shm.buffer_client``: tf2_ros's ``BufferClient`` (a client of a tf2 buffer server
action, not of the arena), re-exported where tf2_ros is importable so that a textual
``tf2_ros`` → ``tf_shm`` port of a node that uses it still imports."""

from __future__ import annotations

try:
    from tf2_ros.buffer_client import BufferClient
except Exception:  # noqa: BLE001 - without tf2_ros there is no buffer server client
    __all__: list[str] = []
else:
    __all__ = ["BufferClient"]
