"""Type stubs of the Rust extension ``tf_shm._native`` (see crates/tf_shm_py/src).

Times and durations (``TimeLike``) are ``int`` ns, ``float`` s (``int(s * 1e9)``), or objects
with ``sec``/``nanosec`` (builtin_interfaces), ``nanoseconds`` (rclpy) or ``secs``/``nsecs``
(genpy). A flat answer is ``(stamp_ns, x, y, z, qx, qy, qz, qw)``: ``T_target_source``,
metres, quaternion x, y, z, w.
"""

from typing import Any

from typing_extensions import TypeAlias

TimeLike: TypeAlias = Any
Flat: TypeAlias = tuple[int, float, float, float, float, float, float, float]
V3: TypeAlias = tuple[float, float, float]
Q: TypeAlias = tuple[float, float, float, float]

class OpenError(RuntimeError): ...

def set_exception_classes(
    base: type,
    lookup: type,
    connectivity: type,
    extrapolation: type,
    invalid_argument: type,
    timeout: type,
) -> None: ...
def to_ns(obj: TimeLike) -> int: ...
def transform_point(transform: tuple[V3, Q], point: V3) -> V3: ...
def transform_vector(transform: tuple[V3, Q], vector: V3) -> V3: ...
def transform_pose(transform: tuple[V3, Q], position: V3, orientation: Q) -> tuple[V3, Q]: ...
def compose_transforms(transform: tuple[V3, Q], other: tuple[V3, Q]) -> tuple[V3, Q]: ...
def interpreter_exiting() -> bool: ...

class NativeBuffer:
    def __init__(
        self,
        domain: int | None = None,
        name: str | None = None,
        open_timeout: TimeLike | None = None,
        cache_time: TimeLike | None = None,
    ) -> None: ...
    @property
    def joined(self) -> bool: ...
    @property
    def cache_time_ns(self) -> int: ...
    @property
    def arena_swaps(self) -> int: ...
    def data_token(self) -> tuple[int, int]: ...
    def wait_for_data(self, since: tuple[int, int], timeout: float) -> tuple[int, int] | None: ...
    @property
    def generation(self) -> int: ...  # deprecated alias of arena_swaps
    def lookup_transform(
        self,
        target_frame: str,
        source_frame: str,
        time: TimeLike,
        timeout: TimeLike | None = None,
    ) -> Flat: ...
    def lookup_pair(self, target_frame: str, source_frame: str, time: TimeLike) -> Flat: ...
    def lookup_transform_full(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
        timeout: TimeLike | None = None,
    ) -> Flat: ...
    def can_transform(
        self,
        target_frame: str,
        source_frame: str,
        time: TimeLike,
        timeout: TimeLike | None = None,
    ) -> tuple[bool, str]: ...
    def can_transform_full(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
        timeout: TimeLike | None = None,
    ) -> tuple[bool, str]: ...
    def get_latest_common_time(self, target_frame: str, source_frame: str) -> int: ...
    def all_frames_as_string(self) -> str: ...
    def all_frames_as_yaml(self, now: int = 0) -> str: ...
    def frame_exists(self, name: str) -> bool: ...
    def chain(
        self,
        target_frame: str,
        target_time: TimeLike,
        source_frame: str,
        source_time: TimeLike,
        fixed_frame: str,
    ) -> list[str]: ...
    def all_frames_as_dot(self, now: int = 0) -> str: ...
    def lookup_velocity(
        self,
        tracking_frame: str,
        observation_frame: str,
        reference_frame: str,
        reference_point: V3,
        reference_point_frame: str,
        time: TimeLike,
        averaging_interval: TimeLike,
    ) -> tuple[V3, V3]: ...
    def frame_names(self) -> list[str]: ...
    def clear(self) -> None: ...

class Arena:
    """TEST-ONLY arena owner (``tf_shm._testing.Arena``)."""

    def __init__(
        self,
        runtime_dir: str,
        domain: int = 0,
        name: str | None = None,
        cache_time_ns: int = 10_000_000_000,
        memory_budget_bytes: int = 4 << 20,
    ) -> None: ...
    def set_transform(
        self,
        parent: str,
        child: str,
        stamp_ns: int,
        translation: V3,
        rotation: Q,
        authority: str = "test",
        is_static: bool = False,
    ) -> None: ...
    def set_transforms(self, items: list[tuple[str, str, int, V3, Q]]) -> None: ...
    def clear(self) -> None: ...
    def close(self) -> None: ...
