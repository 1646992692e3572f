"""TEST-ONLY: an arena owner that writes transforms, standing in for tf_shm_bridge in tests.
Not part of the public API."""

from ._native import Arena

__all__ = ["Arena"]
