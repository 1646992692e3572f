"""tf_shm.Buffer without ROS: tf2_ros's API over an arena written by the test-only owner.
Expected values are computed here from the transforms written (independent quaternion
arithmetic) or are tf2's texts as ROS 2 Jazzy writes them (spec of tf2's behaviour, §4.3)."""

import gc
import math
import subprocess
import sys
import threading
import time
import warnings

import pytest
import tf_shm
from conftest import NS, assert_tf, compose, inverse, yaw_q
from tf_shm import _native

# A depth-3 chain: map -> odom (dynamic, 1 s and 2 s) -> base_link (dynamic) -> laser (static).
ODOM = {1: ((1.0, 0.0, 0.0), yaw_q(0.0)), 2: ((2.0, 0.5, 0.0), yaw_q(0.4))}
BASE = {1: ((0.0, 1.0, 0.0), yaw_q(0.2)), 2: ((0.0, 2.0, 0.1), yaw_q(0.6))}
LASER = ((0.3, 0.0, 0.2), yaw_q(math.pi / 2))


@pytest.fixture
def chain(arena):
    for s in (1, 2):
        arena.set_transform("map", "odom", s * NS, *ODOM[s])
        arena.set_transform("odom", "base_link", s * NS, *BASE[s])
    arena.set_transform("base_link", "laser", 0, *LASER, is_static=True)
    return arena


def lerp_tf(a, b, r):
    """tf2's interpolation of two samples: lerp of translations, slerp of yaw quaternions."""
    t = tuple(x + (y - x) * r for x, y in zip(a[0], b[0]))
    ya, yb = 2 * math.atan2(a[1][2], a[1][3]), 2 * math.atan2(b[1][2], b[1][3])
    return (t, yaw_q(ya + (yb - ya) * r))


def flat_tf(r):
    return ((r[1], r[2], r[3]), (r[4], r[5], r[6], r[7]))


def result_tf(m):
    return (m.translation, m.rotation)


# ---- values --------------------------------------------------------------------------------


def test_results_are_typed_objects_without_geometry_msgs(buffer, chain):
    r = buffer.lookup_transform("map", "laser", 2 * NS)
    assert isinstance(r, tf_shm.TransformResult)
    assert (r.frame_id, r.child_frame_id, r.stamp_ns) == ("map", "laser", 2 * NS)
    expected = compose(compose(ODOM[2], BASE[2]), LASER)
    assert_tf(result_tf(r), expected)


def test_interpolated_depth_3_lookup_is_t_target_source(buffer, chain):
    t = 1.25
    odom = lerp_tf(ODOM[1], ODOM[2], 0.25)
    base = lerp_tf(BASE[1], BASE[2], 0.25)
    expected = compose(compose(odom, base), LASER)
    assert_tf(result_tf(buffer.lookup_transform("map", "laser", t)), expected)
    # The other direction is the inverse.
    back = buffer.lookup_transform("laser", "map", int(t * NS))
    assert_tf(result_tf(back), inverse(expected))
    assert (back.frame_id, back.child_frame_id) == ("laser", "map")


def test_time_zero_is_the_latest_common_time(buffer, chain, arena):
    arena.set_transform("map", "odom", 3 * NS, (3.0, 0.0, 0.0), yaw_q(0.0))
    r = buffer.lookup_transform("map", "laser", 0)
    # odom has 3 s but base_link only 2 s: tf2 answers at the older one.
    assert r.stamp_ns == 2 * NS
    assert buffer.get_latest_common_time("map", "laser") == 2 * NS
    odom = lerp_tf(ODOM[2], ((3.0, 0.0, 0.0), yaw_q(0.0)), 0.0)
    assert_tf(result_tf(r), compose(compose(odom, BASE[2]), LASER))


def test_lookup_transform_full_through_a_fixed_frame(buffer, chain):
    # Where is the laser of 1 s, seen from the laser of 2 s, taking map as fixed?
    r = buffer.lookup_transform_full("laser", 2 * NS, "laser", 1 * NS, "map")
    at1 = compose(compose(ODOM[1], BASE[1]), LASER)
    at2 = compose(compose(ODOM[2], BASE[2]), LASER)
    assert_tf(result_tf(r), compose(inverse(at2), at1))
    assert r.stamp_ns == 2 * NS


def test_same_frame_is_identity_even_unknown(buffer, chain):
    r = buffer.lookup_transform("ghost", "ghost", 5 * NS)
    assert r.translation == (0.0, 0.0, 0.0) and r.rotation == (0.0, 0.0, 0.0, 1.0)
    assert r.stamp_ns == 5 * NS


def test_fast_tuple_variant_equals_lookup_and_follows_new_data(buffer, chain, arena):
    for t in (0, NS, 1.5, 1_999_999_999, 2 * NS):
        slow = buffer.lookup_transform("map", "laser", t)
        fast = buffer.lookup_transform_tuple("map", "laser", t)
        assert fast[0] == slow.stamp_ns
        assert fast[1:4] == slow.translation and fast[4:] == slow.rotation
    # The cached pair must keep answering with what the arena holds now.
    arena.set_transform("map", "odom", 3 * NS, (7.0, 0.0, 0.0), yaw_q(0.0))
    arena.set_transform("odom", "base_link", 3 * NS, (0.0, 0.0, 0.0), yaw_q(0.0))
    fast = buffer.lookup_transform_tuple("map", "laser", 0)
    assert fast[0] == 3 * NS
    assert_tf(flat_tf(fast), compose(((7.0, 0.0, 0.0), yaw_q(0.0)), LASER))
    # Re-parenting: laser now hangs from map directly.
    arena.set_transform("map", "laser", 0, (9.0, 0.0, 0.0), yaw_q(0.0), is_static=True)
    assert_tf(flat_tf(buffer.lookup_transform_tuple("map", "laser", 0)), ((9.0, 0, 0), yaw_q(0)))
    with pytest.raises(tf_shm.LookupException):
        buffer.lookup_transform_tuple("map", "ghost", 0)


def test_fast_tuple_variant_keeps_pairs_apart(buffer, chain):
    """Alternating pairs, names as new (equal, not identical) str objects, and a pair whose
    names swap: each answer is that pair's own."""
    pairs = [("map", "laser"), ("laser", "map"), ("odom", "laser"), ("map", "laser")]
    for _ in range(3):
        for target, source in pairs:
            for t in (0, 1_500_000_000):
                target_copy, source_copy = "".join(list(target)), "".join(list(source))
                assert target_copy is not target
                slow = buffer.lookup_transform(target, source, t)
                for names in ((target, source), (target_copy, source_copy)):
                    fast = buffer.lookup_transform_tuple(*names, t)
                    assert fast[0] == slow.stamp_ns
                    assert fast[1:4] == slow.translation and fast[4:] == slow.rotation


# ---- times and durations -------------------------------------------------------------------


class RosTime:
    """Shaped like builtin_interfaces.msg.Time."""

    def __init__(self, sec, nanosec):
        self.sec, self.nanosec = sec, nanosec


class RclpyTime:
    """Shaped like rclpy.time.Time."""

    def __init__(self, ns):
        self.nanoseconds = ns


class GenpyTime:
    """Shaped like ROS 1's genpy.Time."""

    def __init__(self, secs, nsecs):
        self.secs, self.nsecs = secs, nsecs


@pytest.mark.parametrize(
    "value, ns",
    [
        (0, 0),
        (1_500_000_001, 1_500_000_001),
        (1.5, 1_500_000_000),
        # rclpy: int(seconds * 1e9), truncated: 1.001 s is 1000999999 ns.
        (1.001, 1_000_999_999),
        (-1.001, -1_000_999_999),
        (RosTime(3, 7), 3_000_000_007),
        (RclpyTime(42), 42),
        (GenpyTime(2, 5), 2_000_000_005),
        (True, 1),
    ],
)
def test_time_conversions(value, ns):
    assert _native.to_ns(value) == ns


def test_time_conversion_errors():
    with pytest.raises(TypeError, match="rclpy Time/Duration"):
        _native.to_ns("1.0")
    with pytest.raises(ValueError, match="finite"):
        _native.to_ns(float("nan"))
    with pytest.raises(OverflowError):
        _native.to_ns(1e10)
    with pytest.raises(OverflowError):
        _native.to_ns(2**63)


def test_every_time_form_gives_the_same_lookup(buffer, chain):
    want = buffer.lookup_transform("map", "laser", 1_500_000_000)
    for t in (1.5, RosTime(1, 500_000_000), RclpyTime(1_500_000_000)):
        assert buffer.lookup_transform("map", "laser", t) == want


# ---- errors: tf2's classes and ROS 2 Jazzy's texts -----------------------------------------


def raised(fn, *args):
    with pytest.raises(tf_shm.TransformException) as e:
        fn(*args)
    return type(e.value), str(e.value)


def test_error_classes_and_texts(buffer, chain):
    lk = buffer.lookup_transform
    assert raised(lk, "map", "ghost", 0) == (
        tf_shm.LookupException,
        '"ghost" passed to lookupTransform argument source_frame does not exist. ',
    )
    assert raised(lk, "", "laser", 0) == (
        tf_shm.InvalidArgumentException,
        (
            'Invalid argument "" passed to lookupTransform argument target_frame - in tf2 '
            "frame_ids cannot be empty"
        ),
    )
    assert raised(lk, "/map", "laser", 0) == (
        tf_shm.InvalidArgumentException,
        (
            'Invalid argument "/map" passed to lookupTransform argument target_frame - in tf2 '
            "frame_ids cannot start with a '/'"
        ),
    )
    assert raised(lk, "map", "laser", 2.5) == (
        tf_shm.ExtrapolationException,
        (
            "Lookup would require extrapolation into the future.  Requested time 2.500000 but the "
            "latest data is at time 2.000000, when looking up transform from frame [laser] to "
            "frame [map]"
        ),
    )
    assert raised(lk, "map", "laser", 0.5) == (
        tf_shm.ExtrapolationException,
        (
            "Lookup would require extrapolation into the past.  Requested time 0.500000 but the "
            "earliest data is at time 1.000000, when looking up transform from frame [laser] to "
            "frame [map]"
        ),
    )
    buffer_arena_island(chain)
    assert raised(lk, "map", "island", 0) == (
        tf_shm.ConnectivityException,
        (
            "Could not find a connection between 'map' and 'island' because they are not part of "
            "the same tree.Tf has two or more unconnected trees."
        ),
    )


def buffer_arena_island(arena):
    arena.set_transform("sea", "island", 0, (0.0, 0.0, 0.0), yaw_q(0.0), is_static=True)


def test_exception_hierarchy():
    for cls in (
        tf_shm.LookupException,
        tf_shm.ConnectivityException,
        tf_shm.ExtrapolationException,
        tf_shm.InvalidArgumentException,
        tf_shm.TimeoutException,
    ):
        assert issubclass(cls, tf_shm.TransformException)
        assert cls.__name__ in repr(cls)
    assert issubclass(tf_shm.TransformException, Exception)


def test_get_latest_common_time_raises_what_tf2_py_raises(buffer, chain):
    # tf2_py checks the names first (validateFrameId, raising its own classes) ...
    assert raised(buffer.get_latest_common_time, "map", "ghost") == (
        tf_shm.LookupException,
        '"ghost" passed to get_latest_common_time does not exist. ',
    )
    assert raised(buffer.get_latest_common_time, "", "map") == (
        tf_shm.InvalidArgumentException,
        'Invalid argument "" passed to get_latest_common_time - in tf2 frame_ids cannot be empty',
    )
    # ... and raises the base class with the error code's text when the search fails.
    buffer_arena_island(chain)
    assert raised(buffer.get_latest_common_time, "map", "island") == (
        tf_shm.TransformException,
        (
            "Could not find a connection between 'map' and 'island' because they are not part "
            "of the same tree.Tf has two or more unconnected trees."
        ),
    )


def test_can_transform_and_its_debug_tuple(buffer, chain):
    assert buffer.can_transform("map", "laser", 1.5) is True
    assert buffer.can_transform("map", "laser", 1.5, return_debug_tuple=True) == (True, "")
    assert buffer.can_transform("map", "ghost", 0) is False
    assert buffer.can_transform("map", "ghost", 0, 0, True) == (
        False,
        (
            'Invalid frame ID "ghost" passed to canTransform argument source_frame - frame does '
            "not exist"
        ),
    )
    ok, text = buffer.can_transform("map", "laser", 2.5, return_debug_tuple=True)
    assert not ok and text.startswith("Lookup would require extrapolation into the future.")
    assert buffer.can_transform_full("laser", 2 * NS, "laser", NS, "map") is True
    assert buffer.can_transform_full(
        "laser", 2 * NS, "laser", NS, "ghost", return_debug_tuple=True
    ) == (
        False,
        (
            'Invalid frame ID "ghost" passed to canTransform argument fixed_frame - frame does '
            "not exist"
        ),
    )


def test_all_frames(buffer, chain):
    s = buffer.all_frames_as_string()
    assert s.splitlines() == [
        "Frame odom exists with parent map.",
        "Frame base_link exists with parent odom.",
        "Frame laser exists with parent base_link.",
    ]
    y = buffer.all_frames_as_yaml()
    assert "odom: \n  parent: 'map'\n  broadcaster: 'test'\n" in y
    assert "  most_recent_transform: 2.000000\n  oldest_transform: 1.000000\n" in y


def test_a_shared_buffer_refuses_writes(buffer):
    with pytest.raises(NotImplementedError, match="publish on /tf"):
        buffer.set_transform(object(), "me")
    with pytest.raises(NotImplementedError, match="publish on /tf_static"):
        buffer.set_transform_static(object(), "me")


def test_clear_hides_this_buffers_history_only(buffer, chain, runtime_dir):
    """clear() empties this buffer's dynamic links (statics stay, as tf2's); another buffer in
    this process and one in another process still answer from the whole arena; the next
    transform answers here. The answers themselves are compared with tf2_ros's in
    tests/e2e/test_python_tf2_ros.py."""
    other = tf_shm.Buffer(open_timeout=0)
    buffer.clear()
    with pytest.raises(tf_shm.ConnectivityException):
        buffer.lookup_transform_tuple("map", "laser", 0)
    with pytest.raises(tf_shm.ExtrapolationException):
        buffer.lookup_transform_tuple("map", "odom", 1.5 * NS)
    assert buffer.lookup_transform_tuple("base_link", "laser", 5 * NS)[0] == 5 * NS
    assert other.lookup_transform_tuple("map", "laser", 0)[0] == 2 * NS
    probe = "import tf_shm; print(tf_shm.Buffer(open_timeout=0).lookup_transform_tuple('map', 'laser', 0)[0])"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert int(out.stdout) == 2 * NS
    chain.set_transform("map", "odom", 3 * NS, *ODOM[2])
    chain.set_transform("odom", "base_link", 3 * NS, *BASE[2])
    assert buffer.lookup_transform_tuple("map", "laser", 0)[0] == 3 * NS
    with pytest.raises(tf_shm.ExtrapolationException):
        buffer.lookup_transform_tuple("map", "laser", 2 * NS)
    assert other.lookup_transform_tuple("map", "laser", 2 * NS)[0] == 2 * NS


def test_a_longer_cache_time_is_accepted_with_one_warning_naming_the_bridge_parameter(
    arena, monkeypatch
):
    import tf_shm.buffer as tb

    monkeypatch.setattr(tb, "_warned_cache_time", False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tf_shm.Buffer(cache_time=10.0).cache_time_ns == 10 * NS
        tf_shm.Buffer(cache_time=RclpyTime(5 * NS))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        b = tf_shm.Buffer(cache_time=30.0)
        tf_shm.Buffer(cache_time=120.0)
    assert len(w) == 1, "warned once"
    assert w[0].category is RuntimeWarning
    assert "parameter cache_time" in str(w[0].message)
    assert "30.000 s asked for, but the bridge keeps 10.000 s" in str(w[0].message)
    assert b.can_transform("map", "laser", 0) is False


def test_a_zero_or_negative_cache_time_is_kept_as_tf2_keeps_it(arena):
    """tf2's BufferCore keeps its cache time unchecked; its TimeCache, pruning before each
    insert, then holds a frame's newest sample and those at its second newest stamp (0), or
    only the one inserted last (negative)."""
    for s in (1, 2, 3):
        arena.set_transform("map", "odom", s * NS, (float(s), 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    zero = tf_shm.Buffer(cache_time=0, open_timeout=0)
    assert zero.lookup_transform_tuple("map", "odom", 2.5)[1] == 2.5
    with pytest.raises(tf_shm.ExtrapolationException, match="earliest data is at time 2.0"):
        zero.lookup_transform_tuple("map", "odom", 1.5)
    negative = tf_shm.Buffer(cache_time=-1, open_timeout=0)
    assert negative.lookup_transform_tuple("map", "odom", 3 * NS)[1] == 3.0
    with pytest.raises(tf_shm.ExtrapolationException, match="but only time 3.0+ is in the buffer"):
        negative.lookup_transform_tuple("map", "odom", 2.5)
    assert tf_shm.Buffer(open_timeout=0).lookup_transform_tuple("map", "odom", 1.5)[1] == 1.5


def test_open_timeout_keeps_the_clear_no_bridge_error(runtime_dir):
    with pytest.raises(tf_shm.OpenError) as e:
        tf_shm.Buffer(open_timeout=0)
    assert "no bridge" in str(e.value) or "not serving" in str(e.value).lower()
    start = time.monotonic()
    with pytest.raises(tf_shm.OpenError):
        tf_shm.Buffer(open_timeout=0.2)
    assert time.monotonic() - start >= 0.15


def test_a_buffer_made_before_the_bridge_is_empty_then_joins(runtime_dir):
    from tf_shm._testing import Arena

    b = tf_shm.Buffer()
    assert b.joined is False
    with pytest.raises(tf_shm.LookupException) as e:
        b.lookup_transform("map", "laser", 0)
    assert str(e.value) == '"map" passed to lookupTransform argument target_frame does not exist. '
    assert b.can_transform("map", "laser", 0, return_debug_tuple=True) == (
        False,
        'Invalid frame ID "map" passed to canTransform argument target_frame - frame does not exist',
    )
    assert b._getFrameStrings() == []
    got = []
    waiter = threading.Thread(target=lambda: got.append(b.lookup_transform("map", "laser", 0, 5.0)))
    waiter.start()
    time.sleep(0.1)
    arena = Arena(runtime_dir)
    try:
        served = time.monotonic()
        while not b.joined:
            assert time.monotonic() - served < 2.0
            time.sleep(0.001)
        arena.set_transform("map", "laser", 0, (1.0, 2.0, 3.0), yaw_q(0.0), "t", True)
        waiter.join(5.0)
        assert got and got[0].translation == (1.0, 2.0, 3.0)
        assert b.arena_swaps == 0
    finally:
        arena.close()


def test_a_buffer_with_a_cache_time_made_before_the_bridge_is_freed_when_dropped(runtime_dir):
    # Its check of the cache time waits for the bridge on a thread; that thread must not keep
    # a buffer no one holds (and its arena mapping) alive.
    import weakref

    b = tf_shm.Buffer(cache_time=30.0)
    assert b.joined is False
    alive = weakref.ref(b)
    del b
    end = time.monotonic() + 2.0
    while alive() is not None:
        gc.collect()
        assert time.monotonic() < end, "the buffer is still referenced"
        time.sleep(0.02)
    time.sleep(0.1)
    assert not [t for t in threading.enumerate() if t.name == "tf_shm-cache-time"]


def test_node_and_listener_are_accepted(buffer, chain):
    node = object()
    tf_shm.Buffer(None, node, open_timeout=0)
    listener = tf_shm.TransformListener(buffer, node, qos=10, static_qos=1)
    tf_shm.StaticTransformListener(buffer, node)
    assert listener.buffer is buffer
    assert (listener.tf_sub.topic_name, listener.tf_static_sub.topic_name) == ("/tf", "/tf_static")
    assert not hasattr(listener, "executor"), "as tf2_ros: only with spin_thread=True"
    listener.unregister()
    assert buffer.can_transform("map", "laser", 0)


def test_tf2_ros_module_layout_and_names():
    import importlib

    for module, names in {
        "tf_shm.buffer": ["Buffer"],
        "tf_shm.buffer_interface": [
            "BufferInterface",
            "TypeException",
            "TransformRegistration",
            "ConvertRegistration",
            "NotImplementedException",
            "Stamped",
            "convert",
        ],
        "tf_shm.transform_listener": ["TransformListener"],
        "tf_shm.transform_broadcaster": ["TransformBroadcaster"],
        "tf_shm.static_transform_broadcaster": ["StaticTransformBroadcaster"],
        "tf_shm.buffer_client": [],
    }.items():
        m = importlib.import_module(module)
        for n in names:
            assert hasattr(m, n), f"{module}.{n}"
            assert getattr(tf_shm, n) is getattr(m, n), f"tf_shm.{n}"
    assert issubclass(tf_shm.Buffer, tf_shm.BufferInterface)


def test_an_unregistered_type_raises_type_exception(buffer, chain):
    class Odd:
        header = None

    with pytest.raises(tf_shm.TypeException) as e:
        buffer.transform(Odd(), "map")
    assert "is not loaded or supported" in e.value.errstr


def test_tf2_py_core_methods(buffer, chain):
    assert buffer.lookup_transform_core("map", "laser", 2 * NS) == buffer.lookup_transform(
        "map", "laser", 2 * NS
    )
    assert buffer.lookup_transform_full_core(
        "map", 2 * NS, "laser", NS, "map"
    ) == buffer.lookup_transform_full("map", 2 * NS, "laser", NS, "map")
    assert buffer.can_transform_core("map", "laser", 0) == (True, "")
    assert buffer.can_transform_core("map", "ghost", 0)[0] is False
    assert buffer.can_transform_full_core("map", 0, "laser", 0, "map") == (True, "")
    assert buffer._frameExists("odom") is True
    assert buffer._frameExists("ghost") is False
    assert sorted(buffer._getFrameStrings()) == ["base_link", "laser", "map", "odom"]


def test_yaml_names_the_python_listeners_authority(buffer, arena):
    arena.set_transform("map", "odom", NS, (1.0, 0.0, 0.0), yaw_q(0.0), "Authority undetectable")
    assert "  broadcaster: 'default_authority'\n" in buffer.all_frames_as_yaml()


# ---- waiting -------------------------------------------------------------------------------


def later(seconds, fn):
    t = threading.Timer(seconds, fn)
    t.start()
    return t


def test_lookup_waits_for_data_that_arrives(buffer, arena):
    arena.set_transform("map", "odom", NS, (1.0, 0.0, 0.0), yaw_q(0.0))
    timer = later(
        0.2, lambda: arena.set_transform("odom", "cam", 0, (0, 0, 1.0), yaw_q(0), "t", True)
    )
    start = time.monotonic()
    r = buffer.lookup_transform("map", "cam", 0, timeout=5.0)
    waited = time.monotonic() - start
    timer.join()
    assert 0.15 < waited < 2.0
    assert r.translation == (1.0, 0.0, 1.0)


def test_timeout_ends_with_the_plain_lookup_error(buffer, arena):
    arena.set_transform("map", "odom", NS, (1.0, 0.0, 0.0), yaw_q(0.0))
    start = time.monotonic()
    with pytest.raises(tf_shm.LookupException, match='"cam" passed to lookupTransform'):
        buffer.lookup_transform("map", "cam", 0, RclpyTime(300_000_000))
    assert time.monotonic() - start >= 0.3
    start = time.monotonic()
    assert buffer.can_transform("map", "cam", 0, 0.2) is False
    assert time.monotonic() - start >= 0.2
    with pytest.raises(tf_shm.LookupException):
        buffer.lookup_transform_full("map", 0, "cam", 0, "map", 0.1)


def test_waiting_releases_the_gil(buffer, arena):
    arena.set_transform("map", "odom", NS, (1.0, 0.0, 0.0), yaw_q(0.0))
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.05)
        for wait in (
            lambda: buffer.can_transform("map", "cam", 0, 0.5),
            lambda: buffer.can_transform_full("map", 0, "cam", 0, "map", 0.5),
            lambda: pytest.raises(
                tf_shm.LookupException, buffer.lookup_transform, "map", "cam", 0, 0.5
            ),
        ):
            # The counter can only move while this thread does not hold the GIL: during the
            # wait it must count freely (~10^7/s here; a held GIL gives a few switch slices).
            before = count[0]
            start = time.monotonic()
            wait()
            assert time.monotonic() - start >= 0.5
            assert count[0] - before > 200_000
    finally:
        stop.set()
        t.join()


def test_wait_for_transform_async_without_rclpy(buffer, arena):
    pytest.importorskip("concurrent.futures")
    arena.set_transform("map", "odom", NS, (1.0, 0.0, 0.0), yaw_q(0.0))
    fut = buffer.wait_for_transform_async("map", "cam", 0)
    assert not fut.done()
    arena.set_transform("odom", "cam", 0, (0.0, 0.0, 1.0), yaw_q(0.0), "t", True)
    r = fut.result(timeout=5)
    assert r.translation == (1.0, 0.0, 1.0)
    done = buffer.wait_for_transform_full_async("map", 0, "cam", 0, "map")
    assert done.done() and done.result().translation == (1.0, 0.0, 1.0)


# ---- geometry ------------------------------------------------------------------------------


def test_transform_arithmetic_matches_tf2_geometry_msgs():
    t = ((1.0, 2.0, 3.0), yaw_q(math.pi / 2))
    assert_tf(
        (_native.transform_point(t, (1.0, 0.0, 0.0)), (0, 0, 0, 1)), ((1.0, 3.0, 3.0), (0, 0, 0, 1))
    )
    assert_tf(
        (_native.transform_vector(t, (1.0, 0.0, 0.0)), (0, 0, 0, 1)),
        ((0.0, 1.0, 0.0), (0, 0, 0, 1)),
    )
    pos, rot = _native.transform_pose(t, (1.0, 0.0, 0.0), yaw_q(math.pi))
    # pi/2 + pi = 3pi/2: tf2_geometry_msgs (Python) returns the w >= 0 quaternion.
    assert rot[3] >= 0.0
    assert_tf((pos, rot), ((1.0, 3.0, 3.0), yaw_q(1.5 * math.pi)))
    other = ((0.5, 0.0, 0.0), yaw_q(0.3))
    assert_tf(_native.compose_transforms(t, other), compose(t, other))
    # A non-unit quaternion is normalised, as tf2 does through its matrix.
    scaled = ((0.0, 0.0, 0.0), tuple(2 * c for c in yaw_q(math.pi / 2)))
    assert_tf(
        (_native.transform_point(scaled, (1.0, 0.0, 0.0)), (0, 0, 0, 1)),
        ((0.0, 1.0, 0.0), (0, 0, 0, 1)),
    )


# ---- no leaks ------------------------------------------------------------------------------


def test_no_reference_leaks_over_a_million_calls(buffer, chain):
    def blocks_after(fn, n):
        for _ in range(1000):
            fn()
        gc.collect()
        before = sys.getallocatedblocks()
        for _ in range(n):
            fn()
        gc.collect()
        return sys.getallocatedblocks() - before

    fast = buffer.lookup_transform_tuple
    full = buffer.lookup_transform
    assert blocks_after(lambda: fast("map", "laser", 1.5), 1_000_000) < 100
    assert blocks_after(lambda: full("map", "laser", 1_500_000_000), 200_000) < 100
    assert blocks_after(lambda: buffer.can_transform("map", "ghost", 0, 0, True), 200_000) < 100

    def failing():
        try:
            fast("map", "ghost", 0)
        except tf_shm.LookupException:
            pass

    assert blocks_after(failing, 200_000) < 100


def test_arena_swaps_counts_bridge_restarts(buffer, arena, runtime_dir):
    from tf_shm._testing import Arena

    assert buffer.arena_swaps == 0
    arena.close()
    second = Arena(runtime_dir)
    try:
        deadline = time.monotonic() + 5.0
        while buffer.arena_swaps == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert buffer.arena_swaps == 1
        with pytest.warns(DeprecationWarning, match="use arena_swaps"):
            assert buffer._native.generation == 1
    finally:
        second.close()
