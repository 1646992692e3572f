"""tf_shm's Python package against the real tf2_ros (ROS 2 Jazzy) in one process: the same node
code once with ``tf2_ros`` and once with ``tf_shm`` (issues: "real rclpy nodes run on tf_shm
with only tf2_ros -> tf_shm changed", "TransformListener keeps tf2_ros's contract").

No bridge here: tf_shm's buffer reads an arena written by the test-only owner
(``tf_shm._testing.Arena``), tf2_ros's buffer is fed the same transforms with
``set_transform``; DDS is used only where the test is about DDS (broadcasters, spin_thread).
Needs the ROS environment (rclpy, tf2_ros, tf2_py, tf2_geometry_msgs) and runs in the
loopback-only namespace like the rest of tests/e2e (about 10 s).
"""

from __future__ import annotations

import importlib
import struct
import threading
import time

import pytest
import rclpy
import tf2_ros
from geometry_msgs.msg import TransformStamped
from rclpy.duration import Duration
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.time import Time

NS = 1_000_000_000


@pytest.fixture
def arena(tmp_path, monkeypatch):
    d = tmp_path / "rt"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("TF_SHM_RUNTIME_DIR", str(d))
    from tf_shm._testing import Arena

    a = Arena(str(d))
    yield a
    a.close()


@pytest.fixture
def ros():
    rclpy.init()
    yield
    rclpy.try_shutdown()


def msg(parent, child, stamp_ns, xyz, q=(0.0, 0.0, 0.0, 1.0)):
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.header.stamp = Time(nanoseconds=stamp_ns).to_msg()
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
    r = t.transform.rotation
    r.x, r.y, r.z, r.w = q
    return t


CHAIN = [
    ("map", "odom", 1 * NS, (1.0, 0.0, 0.0), (0.0, 0.0, 0.0998334, 0.9950042), False),
    ("map", "odom", 2 * NS, (2.0, 0.5, 0.0), (0.0, 0.0, 0.1986693, 0.9800666), False),
    ("odom", "base_link", 1 * NS, (0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0), False),
    ("odom", "base_link", 2 * NS, (0.0, 2.0, 0.1), (0.0, 0.0, 0.2955202, 0.9553365), False),
    ("base_link", "laser", 0, (0.3, 0.0, 0.2), (0.0, 0.0, 0.7071068, 0.7071068), True),
]


def both(arena):
    """(tf2_ros.Buffer, tf_shm.Buffer) holding CHAIN."""
    import tf_shm

    ref = tf2_ros.Buffer()
    for p, c, s, xyz, q, static in CHAIN:
        arena.set_transform(p, c, s, xyz, q, "Authority undetectable", static)
        if static:
            ref.set_transform_static(msg(p, c, s, xyz, q), "default_authority")
        else:
            ref.set_transform(msg(p, c, s, xyz, q), "default_authority")
    return ref, tf_shm.Buffer()


def same_tf(a, b):
    assert (a.header.frame_id, a.child_frame_id) == (b.header.frame_id, b.child_frame_id)
    assert a.header.stamp == b.header.stamp
    for f in ("x", "y", "z"):
        assert getattr(a.transform.translation, f) == pytest.approx(
            getattr(b.transform.translation, f), abs=1e-9
        )
    for f in ("x", "y", "z", "w"):
        assert getattr(a.transform.rotation, f) == pytest.approx(
            getattr(b.transform.rotation, f), abs=1e-9
        )


def outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - compared class and text
        return (type(e).__name__, str(e))


# ---- module layout and names ----------------------------------------------------------------


def test_every_name_tf2_ros_exports_is_in_tf_shm():
    import tf_shm

    names = [
        n
        for n, v in vars(tf2_ros).items()
        if not n.startswith("_")
        and (isinstance(v, type) or callable(v))
        and getattr(v, "__module__", "").split(".")[0] in ("tf2_ros", "tf2_py")
    ]
    assert "TransformListener" in names and "BufferInterface" in names
    missing = [n for n in names if not hasattr(tf_shm, n)]
    assert not missing, f"tf2_ros exports these and tf_shm does not: {missing}"
    for mod in (
        "buffer",
        "buffer_interface",
        "buffer_client",
        "transform_listener",
        "transform_broadcaster",
        "static_transform_broadcaster",
    ):
        up = importlib.import_module(f"tf2_ros.{mod}")
        ours = importlib.import_module(f"tf_shm.{mod}")
        for n, v in vars(up).items():
            if isinstance(v, type) and v.__module__ == up.__name__:
                assert hasattr(ours, n), f"tf_shm.{mod}.{n}"
    # The exceptions are tf2_py's own classes.
    assert tf_shm.LookupException is tf2_ros.LookupException
    assert tf_shm.TypeException is tf2_ros.TypeException


def test_star_import_and_incidental_names_port():
    """`from tf2_ros import *` (tf2_ros has no __all__: every public name, including what its
    modules import) and `tf2_ros.TransformStamped()`, as real nodes write them, port to tf_shm:
    the same names, tf2_ros's own objects except tf_shm's replacements and tf_shm's modules."""
    import tf_shm

    theirs, ours = {}, {}
    exec("from tf2_ros import *", theirs)  # noqa: S102 - the import form under test
    exec("from tf_shm import *", ours)  # noqa: S102
    theirs = {k: v for k, v in theirs.items() if not k.startswith("__")}
    missing = sorted(set(theirs) - set(ours))
    assert not missing, f"`from tf_shm import *` lacks: {missing}"
    replaced = {"Buffer", "TransformListener", "TransformBroadcaster", "StaticTransformBroadcaster"}
    modules = {"buffer", "buffer_client", "buffer_interface", "transform_listener"}
    modules |= {"transform_broadcaster", "static_transform_broadcaster"}
    for name, value in theirs.items():
        if name in replaced:
            assert ours[name] is getattr(tf_shm, name), name
        elif name in modules:
            assert ours[name] is importlib.import_module(f"tf_shm.{name}"), name
        else:
            assert ours[name] is value, name
    assert tf_shm.TransformStamped is TransformStamped
    assert tf_shm.Duration is Duration


# ---- tf2_py's BufferCore methods, side by side -------------------------------------------------


def test_core_methods_answer_as_tf2_py(arena):
    ref, ours = both(arena)
    t15 = Time(nanoseconds=1_500_000_000)
    for target, source in (("map", "laser"), ("laser", "map"), ("odom", "laser")):
        for t in (Time(), t15, Time(seconds=2)):
            same_tf(
                ref.lookup_transform_core(target, source, t),
                ours.lookup_transform_core(target, source, t),
            )
            assert ref.can_transform_core(target, source, t) == ours.can_transform_core(
                target, source, t
            )
        same_tf(
            ref.lookup_transform_full_core(target, Time(seconds=2), source, t15, "map"),
            ours.lookup_transform_full_core(target, Time(seconds=2), source, t15, "map"),
        )
        assert ref.can_transform_full_core(
            target, t15, source, Time(seconds=2), "odom"
        ) == ours.can_transform_full_core(target, t15, source, Time(seconds=2), "odom")
    for bad in (("map", "ghost", t15), ("map", "laser", Time(seconds=3)), ("", "map", t15)):
        assert outcome(lambda b=bad: ref.lookup_transform_core(*b)) == outcome(
            lambda b=bad: ours.lookup_transform_core(*b)
        )
        assert ref.can_transform_core(*bad) == ours.can_transform_core(*bad)
    for f in ("map", "odom", "laser", "ghost", "NO_PARENT"):
        assert ref._frameExists(f) == ours._frameExists(f)
    assert ref._getFrameStrings() == ours._getFrameStrings()
    assert ref.all_frames_as_yaml() == ours.all_frames_as_yaml()


# A tree with forks, a second tree and links covering different times, for _chain,
# _allFramesAsDot and lookupVelocity: (parent, child, stamp ns, xyz, q, static).
FORKED = [
    ("map", "odom", 1 * NS, (1.0, 0.0, 0.0), (0.0, 0.0, 0.0998334, 0.9950042), False),
    ("map", "odom", 2 * NS, (2.0, 0.5, 0.0), (0.0, 0.0, 0.1986693, 0.9800666), False),
    ("map", "odom", 3 * NS, (2.5, 1.5, 0.2), (0.0, 0.1, 0.2, 0.9746794), False),
    ("odom", "base_link", 1 * NS, (0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0), False),
    ("odom", "base_link", 2 * NS, (0.0, 2.0, 0.1), (0.0, 0.0, 0.2955202, 0.9553365), False),
    ("base_link", "laser", 0, (0.3, 0.0, 0.2), (0.0, 0.0, 0.7071068, 0.7071068), True),
    ("base_link", "arm1", 1_500_000_000, (0.1, 0.0, 0.5), (0.2, 0.0, 0.0, 0.9797959), False),
    ("base_link", "arm1", 2_500_000_000, (0.1, 0.1, 0.5), (0.0, 0.3, 0.0, 0.9539392), False),
    ("arm1", "arm2", 0, (0.0, 0.0, 0.4), (0.0, 0.0, 0.0, 1.0), True),
    ("map", "gps", 1 * NS, (5.0, 5.0, 0.0), (0.0, 0.0, 0.0, 1.0), False),
    ("world", "other", 2 * NS, (0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 1.0), False),
]
FORKED_FRAMES = ["map", "odom", "base_link", "laser", "arm1", "arm2", "gps", "other", "ghost"]


def forked(arena):
    """(tf2_ros.Buffer, tf_shm.Buffer) holding FORKED."""
    import tf_shm

    ref = tf2_ros.Buffer()
    for p, c, s, xyz, q, static in FORKED:
        arena.set_transform(p, c, s, xyz, q, "Authority undetectable", static)
        if static:
            ref.set_transform_static(msg(p, c, s, xyz, q), "default_authority")
        else:
            ref.set_transform(msg(p, c, s, xyz, q), "default_authority")
    return ref, tf_shm.Buffer()


def test_chain_is_tf2_pys(arena):
    ref, ours = forked(arena)
    times = [Time(), Time(nanoseconds=1_500_000_000), Time(seconds=2), Time(seconds=4)]
    compared = ok = 0
    for target in FORKED_FRAMES:
        for source in FORKED_FRAMES:
            for fixed in ("map", "base_link", "arm2", "ghost"):
                for tt in times:
                    for st in times[:3]:
                        args = (target, tt, source, st, fixed)
                        want = outcome(lambda a=args: ref._chain(*a))
                        assert outcome(lambda a=args: ours._chain(*a)) == want, args
                        compared += 1
                        ok += want[0] == "ok"
    # Keyword arguments, as tf2_py names them.
    kw = {"target_frame": "arm2", "target_time": Time(seconds=2), "source_frame": "laser"}
    kw.update(source_time=Time(nanoseconds=1_500_000_000), fixed_frame="map")
    assert ours._chain(**kw) == ref._chain(**kw)
    assert ok > compared // 4  # the walks succeed often enough for the chains to matter


def test_all_frames_as_dot_is_tf2_pys(arena):
    import tf_shm

    empty = tf_shm.Buffer()
    assert empty._allFramesAsDot() == tf2_ros.Buffer()._allFramesAsDot()
    ref, ours = forked(arena)
    assert ours._allFramesAsDot() == ref._allFramesAsDot()
    for now in (Time(nanoseconds=3_250_000_000), Time(seconds=1_700_000_000)):
        assert ours._allFramesAsDot(time=now) == ref._allFramesAsDot(time=now)
        assert ours._allFramesAsDot(now) == ref._allFramesAsDot(now)


def bits(result):
    """An outcome with every float as its bit pattern (NaN equal to the same NaN)."""
    if isinstance(result, float):
        return struct.pack("<d", result)
    if isinstance(result, tuple):
        return tuple(bits(r) for r in result)
    return result


def test_lookup_velocity_is_tf2_pys(arena):
    ref, ours = forked(arena)
    times = [Time(), Time(nanoseconds=1_500_000_000), Time(nanoseconds=1_999_000_000)]
    times += [Time(nanoseconds=2_400_000_000), Time(seconds=5)]
    intervals = [Duration(nanoseconds=10_000_000), Duration(seconds=1), Duration(seconds=0)]
    pairs = [("base_link", "map"), ("map", "base_link"), ("arm2", "odom"), ("laser", "map")]
    pairs += [("other", "map"), ("ghost", "map"), ("map", "map")]
    answered = 0
    for tracking, observation in pairs:
        for t in times:
            for d in intervals:
                args = (tracking, observation, t, d)
                want = bits(outcome(lambda a=args: ref.lookupVelocityCore(*a)))
                assert bits(outcome(lambda a=args: ours.lookupVelocityCore(*a))) == want, args
                answered += want[0] == "ok"
                full = (tracking, observation, "odom", (0.5, -1.0, 2.0), "arm1", t, d)
                want = bits(outcome(lambda a=full: ref.lookupVelocityFullCore(*a)))
                assert bits(outcome(lambda a=full: ours.lookupVelocityFullCore(*a))) == want, full
                answered += want[0] == "ok"
    kw = {"tracking_frame": "base_link", "observation_frame": "map"}
    kw.update(time=Time(nanoseconds=1_500_000_000), averaging_interval=Duration(seconds=1))
    assert ours.lookupVelocityCore(**kw) == ref.lookupVelocityCore(**kw)
    assert ref.lookupVelocityCore(**kw) != ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    assert answered > 10


# ---- BufferInterface, transform() ---------------------------------------------------------------


def test_transform_goes_through_tf2_ros_registration(arena):
    import tf2_geometry_msgs  # noqa: F401 - registers its types, as a node does
    from geometry_msgs.msg import (
        Point32,
        PointStamped,
        PolygonStamped,
        PoseStamped,
        PoseWithCovarianceStamped,
        Vector3Stamped,
    )

    ref, ours = both(arena)
    assert isinstance(ours, tf2_ros.BufferInterface)
    stamp = Time(nanoseconds=1_500_000_000).to_msg()
    objs = []
    p = PointStamped()
    p.point.x, p.point.y = 1.0, 2.0
    v = Vector3Stamped()
    v.vector.x = 1.0
    pose = PoseStamped()
    pose.pose.position.z = 1.0
    pose.pose.orientation.w = 1.0
    cov = PoseWithCovarianceStamped()
    cov.pose.pose.orientation.w = 1.0
    cov.pose.covariance = [float(i) for i in range(36)]
    poly = PolygonStamped()
    poly.polygon.points = [Point32(x=1.0), Point32(y=2.0, z=0.5)]
    objs = [p, v, pose, cov, poly]
    for o in objs:
        o.header.frame_id, o.header.stamp = "laser", stamp
        a, b = ref.transform(o, "map"), ours.transform(o, "map")
        assert type(a) is type(b)
        assert a.header == b.header
        assert str(a) == str(b) or _close(a, b), type(o).__name__
    t = TransformStamped()
    t.header.frame_id, t.header.stamp = "laser", stamp
    # tf2_geometry_msgs registers no TransformStamped: both raise tf2_ros's TypeException.
    ea, eb = outcome(lambda: ref.transform(t, "map")), outcome(lambda: ours.transform(t, "map"))
    assert ea[0] == eb[0] == "TypeException"


def _close(a, b):
    """Messages equal up to 1e-9 in every float (rounding of the two implementations)."""
    from rosidl_runtime_py import message_to_ordereddict

    def flat(d, out):
        if isinstance(d, dict):
            for v in d.values():
                flat(v, out)
        elif isinstance(d, (list, tuple)):
            for v in d:
                flat(v, out)
        else:
            out.append(d)
        return out

    fa, fb = flat(message_to_ordereddict(a), []), flat(message_to_ordereddict(b), [])
    return len(fa) == len(fb) and all(
        x == pytest.approx(y, abs=1e-9) if isinstance(x, float) else x == y for x, y in zip(fa, fb)
    )


def test_a_long_cache_time_is_accepted(arena):
    import tf_shm

    with pytest.warns(RuntimeWarning, match="cache_time"):
        tf_shm.Buffer(Duration(seconds=30))


@pytest.mark.parametrize("cache_s", [1.0, 0.25])
def test_a_shorter_cache_time_prunes_as_tf2(arena, cache_s):
    import tf_shm

    ref = tf2_ros.Buffer(cache_time=Duration(seconds=cache_s))
    ours = tf_shm.Buffer(cache_time=Duration(seconds=cache_s))
    # 10 Hz over 3 s (stamps 0.1 s apart, arriving in order), and a static leaf.
    for k in range(1, 31):
        s = k * 100_000_000 + 7
        arena.set_transform("map", "odom", s, (k * 0.1, 0.0, 0.0), (0, 0, 0, 1.0), "t", False)
        ref.set_transform(msg("map", "odom", s, (k * 0.1, 0.0, 0.0)), "default_authority")
    arena.set_transform("odom", "laser", 0, (0.0, 1.0, 0.0), (0, 0, 0, 1.0), "t", True)
    ref.set_transform_static(msg("odom", "laser", 0, (0.0, 1.0, 0.0)), "default_authority")
    times = [0, 3_000_000_007, 2_950_000_000, 2_000_000_007, 1_950_000_000, 1_900_000_007]
    times += [2_750_000_000, 2_700_000_007, 2_650_000_000, 2_600_000_007, 100_000_007]
    for t in times:
        for a, b in (("map", "laser"), ("laser", "map"), ("map", "odom")):
            got = outcome(lambda a=a, b=b, t=t: ours.lookup_transform(a, b, Time(nanoseconds=t)))
            want = outcome(lambda a=a, b=b, t=t: ref.lookup_transform(a, b, Time(nanoseconds=t)))
            assert got[0] == want[0], (a, b, t, got, want)
            if got[0] == "ok":
                same_tf(got[1], want[1])
            else:
                assert got == want
            assert ours.can_transform_core(a, b, Time(nanoseconds=t)) == ref.can_transform_core(
                a, b, Time(nanoseconds=t)
            )
    assert "ExtrapolationException" in [
        outcome(lambda t=t: ours.lookup_transform("map", "odom", Time(nanoseconds=t)))[0]
        for t in times
    ], "the cache limit was never reached: the test does not test it"


# ---- clear() -------------------------------------------------------------------------------------


def feed(arena, ref, p, c, s, xyz, static=False):
    """One transform into the arena and into tf2_ros's buffer."""
    arena.set_transform(p, c, s, xyz, (0.0, 0.0, 0.0, 1.0), "default_authority", static)
    if static:
        ref.set_transform_static(msg(p, c, s, xyz), "default_authority")
    else:
        ref.set_transform(msg(p, c, s, xyz), "default_authority")


CLEAR_PAIRS = [("map", "odom"), ("odom", "map"), ("map", "base_link"), ("odom", "base_link")]
CLEAR_PAIRS += [("base_link", "laser"), ("map", "laser"), ("laser", "odom"), ("map", "ghost")]


def same_answers(ours, ref, times):
    """Every lookup, can_transform and latest common time of CLEAR_PAIRS at `times` (ns) as
    tf2_ros's: the same transform, or the same exception class and text."""
    for a, b in CLEAR_PAIRS:
        for t in times:
            at = Time(nanoseconds=t)
            got = outcome(lambda a=a, b=b, at=at: ours.lookup_transform(a, b, at))
            want = outcome(lambda a=a, b=b, at=at: ref.lookup_transform(a, b, at))
            assert got[0] == want[0], (a, b, t, got, want)
            if got[0] == "ok":
                same_tf(got[1], want[1])
            else:
                assert got == want
            assert ours.can_transform_core(a, b, at) == ref.can_transform_core(a, b, at)
            # The hot-loop lookup too.
            tup = outcome(lambda a=a, b=b, at=at: ours.lookup_transform_tuple(a, b, at))
            if got[0] == "ok":
                stamp = got[1].header.stamp
                assert tup[0] == "ok" and tup[1][0] == stamp.sec * NS + stamp.nanosec
            else:
                assert tup == want
        got = outcome(lambda a=a, b=b: ours.get_latest_common_time(a, b))
        want = outcome(lambda a=a, b=b: ref.get_latest_common_time(a, b))
        assert got == want, (a, b)


def test_clear_answers_as_tf2_ros_clear(arena):
    """clear(), then lookups at old stamps and time 0, then new transforms and lookups: every
    answer and error text is tf2_ros's Buffer's after the same clear() and set_transform()s.
    Statics stay; another buffer on the same arena is not affected."""
    import tf_shm

    ref, untouched = tf2_ros.Buffer(), tf2_ros.Buffer()
    ours, other = tf_shm.Buffer(), tf_shm.Buffer()
    for w, r in ((arena, ref), (_Null(), untouched)):
        for k in (1, 2):
            feed(w, r, "map", "odom", k * NS, (k * 1.0, 0.0, 0.0))
            feed(w, r, "odom", "base_link", k * NS, (0.0, k * 1.0, 0.0))
        feed(w, r, "base_link", "laser", 0, (0.3, 0.0, 0.2), True)
    old = [0, 1 * NS, 1_500_000_000, 2 * NS, 3 * NS]
    same_answers(ours, ref, old)
    ours.clear()
    ref.clear()
    same_answers(ours, ref, old)
    assert ours.lookup_transform("base_link", "laser", Time(seconds=7)).header.stamp.sec == 7
    assert ours.all_frames_as_yaml() == ref.all_frames_as_yaml()
    assert ours.all_frames_as_string() == ref.all_frames_as_string()
    assert ours._getFrameStrings() == ref._getFrameStrings()
    # The other buffer on the arena still holds everything.
    same_answers(other, untouched, old)
    # New data: one link first (the tree stays broken at odom -> base_link), then both.
    feed(arena, ref, "map", "odom", 3 * NS, (3.0, 0.0, 0.0))
    new = old + [2_500_000_000, 3_500_000_000, 4 * NS]
    same_answers(ours, ref, new)
    feed(arena, ref, "odom", "base_link", 3 * NS, (0.0, 3.0, 0.0))
    feed(arena, ref, "map", "odom", 4 * NS, (4.0, 1.0, 0.0))
    feed(arena, ref, "odom", "base_link", 4 * NS, (0.0, 4.0, 1.0))
    same_answers(ours, ref, new)
    assert ours.all_frames_as_yaml() == ref.all_frames_as_yaml()
    # A second clear hides those too; a frame made after it answers in full.
    ours.clear()
    ref.clear()
    feed(arena, ref, "laser", "sonar", 4 * NS, (0.0, 0.0, 1.0))
    feed(arena, ref, "laser", "sonar", 5 * NS, (0.0, 0.0, 2.0))
    same_answers(ours, ref, new + [5 * NS])
    for t in (0, 4 * NS, 4_500_000_000, 6 * NS):
        at = Time(nanoseconds=t)
        assert (
            outcome(lambda at=at: ours.lookup_transform("laser", "sonar", at))[0]
            == outcome(lambda at=at: ref.lookup_transform("laser", "sonar", at))[0]
        )


class _Null:
    """An arena that keeps nothing (feeds tf2_ros's buffer alone)."""

    def set_transform(self, *args):
        pass


def test_clear_then_timed_lookup_waits_for_the_next_transform(arena):
    """The pattern of a real node: clear() after each lookup, then a lookup with a timeout that
    must answer with the next transform (not the cleared one), and wait for it."""
    import tf_shm

    ours = tf_shm.Buffer()
    arena.set_transform("map", "odom", 1 * NS, (1.0, 0, 0), (0, 0, 0, 1.0), "t", False)
    assert ours.lookup_transform("map", "odom", Time()).header.stamp.sec == 1
    ours.clear()
    started = time.monotonic()
    with pytest.raises(tf2_ros.ConnectivityException):
        ours.lookup_transform("map", "odom", Time(), timeout=Duration(seconds=0.2))
    assert time.monotonic() - started >= 0.19, "the timed lookup did not wait"
    assert not ours.can_transform("map", "odom", Time(), timeout=Duration(seconds=0.05))
    writer = threading.Timer(
        0.1,
        lambda: arena.set_transform("map", "odom", 2 * NS, (2.0, 0, 0), (0, 0, 0, 1.0), "t", False),
    )
    writer.start()
    try:
        got = ours.lookup_transform("map", "odom", Time(), timeout=Duration(seconds=5))
    finally:
        writer.join()
    assert (got.header.stamp.sec, got.transform.translation.x) == (2, 2.0)


def test_clear_with_a_cache_time_and_after_the_bridge_clears(arena):
    """clear() combined with a shorter cache time prunes as tf2_ros's buffer of that cache time
    after clear(); the arena's own clear (the bridge's, on a clock jump back) supersedes the
    buffer's, so older stamps answer again, as in tf2_ros's buffer cleared by its listener."""
    import tf_shm

    ref = tf2_ros.Buffer(cache_time=Duration(seconds=1))
    ours = tf_shm.Buffer(cache_time=Duration(seconds=1))
    for k in range(1, 11):
        feed(arena, ref, "map", "odom", k * 300_000_000, (k * 0.1, 0.0, 0.0))
    ours.clear()
    ref.clear()
    for k in range(11, 21):
        feed(arena, ref, "map", "odom", k * 300_000_000, (k * 0.1, 0.0, 0.0))
    times = [0, 2_900_000_000, 3_100_000_000, 4_000_000_000, 4_950_000_000, 5_000_000_000]
    times += [5_100_000_000, 6_000_000_000, 6_100_000_000]
    for t in times:
        at = Time(nanoseconds=t)
        got = outcome(lambda at=at: ours.lookup_transform("map", "odom", at))
        want = outcome(lambda at=at: ref.lookup_transform("map", "odom", at))
        assert got[0] == want[0], (t, got, want)
        if got[0] == "ok":
            same_tf(got[1], want[1])
        else:
            assert got == want
    arena.clear()
    ref.clear()
    feed(arena, ref, "map", "odom", 1 * NS, (1.0, 0.0, 0.0))
    got = ours.lookup_transform("map", "odom", Time())
    same_tf(got, ref.lookup_transform("map", "odom", Time()))


# ---- futures under every executor --------------------------------------------------------------


@pytest.mark.parametrize("executor_cls", [SingleThreadedExecutor, MultiThreadedExecutor])
@pytest.mark.parametrize("how", ["node=", "listener"])
def test_await_lookup_transform_async_resumes_promptly(ros, arena, executor_cls, how):
    import tf_shm

    node = rclpy.create_node(f"tf_shm_async_{how[:4]}")
    try:
        if how == "node=":
            buffer = tf_shm.Buffer(node=node)
        else:
            buffer = tf_shm.Buffer()
            tf_shm.TransformListener(buffer, node)
        resumed = {}

        async def wait_for_late_frame():
            # In the node's default (mutually exclusive) group, as a timer callback is.
            t = await buffer.lookup_transform_async("map", "late", Time())
            resumed["at"] = time.monotonic()
            resumed["x"] = t.transform.translation.x
            w = await buffer.wait_for_transform_async("map", "later", Time())
            resumed["at2"] = time.monotonic()
            resumed["x2"] = w.transform.translation.x

        timer = node.create_timer(0.01, lambda: None)
        timer.cancel()
        ex = executor_cls()
        ex.add_node(node)
        task = ex.create_task(wait_for_late_frame)
        written = {}

        def writer():
            time.sleep(0.3)
            written["at"] = time.monotonic()
            arena.set_transform("map", "late", 0, (4.0, 0.0, 0.0), (0, 0, 0, 1.0), "t", True)
            time.sleep(0.3)
            written["at2"] = time.monotonic()
            arena.set_transform("map", "later", 0, (5.0, 0.0, 0.0), (0, 0, 0, 1.0), "t", True)

        w = threading.Thread(target=writer)
        w.start()
        deadline = time.monotonic() + 5.0
        while not task.done() and time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.5)
        w.join()
        assert task.done(), "the coroutine never resumed"
        task.result()
        assert (resumed["x"], resumed["x2"]) == (4.0, 5.0)
        for k in ("at", "at2"):
            late = resumed[k] - written[k]
            assert late < 0.05, f"resumed {late * 1000:.1f} ms after the data arrived"
        ex.shutdown()
    finally:
        node.destroy_node()


# ---- TransformListener's contract --------------------------------------------------------------


@pytest.mark.parametrize("package", ["tf2_ros", "tf_shm"])
def test_spin_thread_spins_the_node_and_shuts_down(ros, arena, package):
    from std_msgs.msg import String

    mod = importlib.import_module(package)
    node = rclpy.create_node(f"spin_thread_{package}")
    buffer = mod.Buffer()
    ticks, heard = [], []
    node.create_timer(0.02, lambda: ticks.append(1))
    node.create_subscription(String, "chatter", heard.append, 10)
    pub = node.create_publisher(String, "chatter", 10)
    listener = mod.TransformListener(buffer, node, spin_thread=True)
    try:
        deadline = time.monotonic() + 5.0
        while (len(ticks) < 3 or not heard) and time.monotonic() < deadline:
            pub.publish(String(data="hi"))
            time.sleep(0.05)
        assert len(ticks) >= 3, "the timer never ran"
        assert heard, "the subscription never ran"
        from rclpy.callback_groups import ReentrantCallbackGroup

        assert isinstance(listener.group, ReentrantCallbackGroup)
        assert isinstance(listener.executor, SingleThreadedExecutor)
        assert listener.tf_sub.topic_name == "/tf"
        assert listener.tf_static_sub.topic_name == "/tf_static"
        assert listener.buffer is buffer and listener.node is node
    finally:
        listener.executor.shutdown()
        listener.dedicated_listener_thread.join(5.0)
        assert not listener.dedicated_listener_thread.is_alive()
        listener.unregister()
        node.destroy_node()


@pytest.mark.parametrize("package", ["tf2_ros", "tf_shm"])
def test_a_remapped_tf_topic_is_named_and_tf_shm_says_it_does_not_serve_it(
    ros, arena, package, capfd
):
    """tf2_ros's listener subscribes to the node's remapped /tf; tf_shm's reads the arena,
    which holds what its bridge subscribes to: its stand-ins carry the remapped names and it
    says so at error level rather than answering another tree silently."""
    mod = importlib.import_module(package)
    node = rclpy.create_node(
        f"remapped_{package}",
        cli_args=["--ros-args", "-r", "/tf:=/robot1/tf", "-r", "/tf_static:=/robot1/tf_static"],
        use_global_arguments=False,
    )
    try:
        listener = mod.TransformListener(mod.Buffer(), node)
        assert listener.tf_sub.topic_name == "/robot1/tf"
        assert listener.tf_static_sub.topic_name == "/robot1/tf_static"
        said = capfd.readouterr().err
        if package == "tf_shm":
            assert "tf_shm: this node subscribes to TF as /robot1/tf and /robot1/tf_static" in said
            assert "tf_topic:=/robot1/tf" in said
        else:
            assert "tf_shm" not in said
        listener.unregister()
        # Not remapped: nothing said.
        plain = rclpy.create_node(f"plain_{package}", use_global_arguments=False)
        mod.TransformListener(mod.Buffer(), plain).unregister()
        assert "remapped" not in capfd.readouterr().err
        plain.destroy_node()
    finally:
        node.destroy_node()


@pytest.mark.parametrize("kind", ["TransformBroadcaster", "StaticTransformBroadcaster"])
def test_broadcasters_publish_as_tf2_ros(ros, kind):
    import tf_shm
    from tf2_msgs.msg import TFMessage

    node = rclpy.create_node(f"bc_{kind}")
    try:
        ref, ours = getattr(tf2_ros, kind)(node), getattr(tf_shm, kind)(node)
        assert ours.pub_tf.topic_name == ref.pub_tf.topic_name
        assert ours.pub_tf.qos_profile == ref.pub_tf.qos_profile
        got = []
        topic = ref.pub_tf.topic_name
        node.create_subscription(TFMessage, topic, got.append, ref.pub_tf.qos_profile)
        ex = SingleThreadedExecutor()
        ex.add_node(node)
        ours.sendTransform([msg("map", "a", NS, (1.0, 0.0, 0.0))])
        ours.sendTransform(msg("map", "b", NS, (2.0, 0.0, 0.0)))
        static = kind.startswith("Static")
        # Static: depth 1, so a late-matched subscriber may get only the last message, which
        # holds every static transform sent so far.
        want = [["a", "b"]] if static else [["a"], ["b"]]
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            ex.spin_once(timeout_sec=0.1)
            children = [[t.child_frame_id for t in m.transforms] for m in got]
            if children[-len(want) :] == want:
                break
        assert children[-len(want) :] == want
        ex.shutdown()
    finally:
        node.destroy_node()
