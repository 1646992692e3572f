"""Python consumers end to end: PR2 publisher -> DDS -> tf_shm_bridge -> an rclpy node using
tf_shm.Buffer, whose TransformStamped answers must equal ROS 2 Jazzy's tf2_ros.Buffer fed the
same transforms (tests/e2e/tf2_ref.py), to 1e-9. The package comes from the wheel scripts/test.sh
builds (on PYTHONPATH as target/py-site). Same isolation as test_pr2.py: loopback-only network
namespace, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST."""

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ROOT, STAMP_BASE_NS, tree, wait_for
from test_pr2 import PAIRS, assert_same, newest_common, reference, wait_complete


@pytest.fixture(scope="module")
def tf_shm_package():
    r = subprocess.run(
        [sys.executable, "-c", "import tf_shm; print(tf_shm.__file__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, (
        "the tf_shm Python package is not importable: build it as scripts/test.sh does "
        f"(pip wheel ./crates/tf_shm_py, on PYTHONPATH)\n{r.stderr}"
    )


def pr2_through_bridge(world):
    """Bridge and PR2 publisher running, the tree complete: (publisher, newest common stamp, s)."""
    bridge = world.bridge()
    wait_for(
        "the bridge's arena",
        lambda: world.check_alive(bridge) or tree(world) is not None,
        20,
        world,
    )
    pub = world.publisher()
    return pub, newest_common(wait_complete(world, [bridge, pub]))


def test_rclpy_node_with_tf_shm_buffer_matches_tf2(run, tf_shm_package):
    pub, t0 = pr2_through_bridge(run)

    def two_seconds_on():
        t = newest_common(tree(run))
        return t if t >= t0 + 2.0 else None

    t_now = wait_for("2 s of transforms after the tree was complete", two_seconds_on, 30, run)
    lo, hi = int((t0 + 0.2) * 1e6), int((t_now - 0.2) * 1e6)
    times_ns = [
        (lo + (hi - lo) * i // 4 - (lo + (hi - lo) * i // 4) % 10_000 + 4_321) * 1000
        for i in range(5)
    ]
    queries = [[t, s, ns] for t, s in PAIRS for ns in times_ns]
    queries.append(["map", "no_such_frame", times_ns[0]])
    node = subprocess.run(
        [*run.netns, sys.executable, str(ROOT / "tests" / "e2e" / "python_node.py")],
        input=json.dumps(queries),
        env=run.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert node.returncode == 0, f"python node failed:\n{node.stdout}\n{node.stderr}\n{run.logs()}"
    lines = [json.loads(line) for line in node.stdout.splitlines() if line.startswith("{")]
    answers = lines
    pub.send_signal(signal.SIGINT)
    assert pub.wait(timeout=10) == 0, run.logs()

    want = reference(run.dir / "pub.jsonl", queries[:-1])
    worst = 0.0
    for got, q, w in zip(answers, queries, want):
        assert got.get("type") == "geometry_msgs.msg._transform_stamped.TransformStamped", got
        assert (got["frame_id"], got["child_frame_id"]) == (q[0], q[1]), got
        worst = max(worst, assert_same(got, w, f"T_{q[0]}_{q[1]} at {q[2]} ns"))
    assert answers[-1] == {
        "e": 'LookupException: "no_such_frame" passed to lookupTransform argument source_frame '
        "does not exist. "
    }, answers[-1]
    assert len(answers) == len(queries), node.stdout
    print(f"\n{len(answers) - 1} TransformStamped equal tf2's; largest difference {worst:.2e}")


def test_example_listener_runs_against_the_bridge(run, tf_shm_package):
    pr2_through_bridge(run)
    ex = run.start(
        "example",
        [sys.executable, str(ROOT / "examples" / "python" / "tf_shm_listener.py")],
    )
    out = wait_for(
        "the example's first transform",
        lambda: run.check_alive(ex) or "T_map_r_gripper_tool_frame at" in ex.log.read_text(),
        30,
        run,
        0.5,
    )
    assert out
    text = ex.log.read_text()
    assert STAMP_BASE_NS // 10**9 <= int(
        text.split("T_map_r_gripper_tool_frame at ")[1].split(".")[0]
    ), text


def test_tf2_ros_lookup_exception_catches_ours(tmp_path, monkeypatch, tf_shm_package):
    import tf2_ros

    monkeypatch.setenv("TF_SHM_RUNTIME_DIR", str(tmp_path))
    import tf_shm
    from tf_shm._testing import Arena

    arena = Arena(str(tmp_path))
    try:
        with pytest.raises(tf2_ros.LookupException):
            tf_shm.Buffer(open_timeout=0).lookup_transform("map", "no_such_frame", 0)
    finally:
        arena.close()


DEBIAN_TF2_PY = """
import os, sys, tempfile
import rospy, tf2_py
from geometry_msgs.msg import TransformStamped
rt = tempfile.mkdtemp(); os.environ["TF_SHM_RUNTIME_DIR"] = rt
import tf_shm
from tf_shm._testing import Arena
assert tf_shm.LookupException is tf2_py.LookupException
arena = Arena(rt)
core = tf2_py.BufferCore(rospy.Duration(10))
m = TransformStamped()
for s, x in ((1, 1.0), (2, 3.0)):
    arena.set_transform("map", "odom", s * 10**9, (x, 0.5, 0.0), (0.0, 0.0, 0.6, 0.8))
    m.header.frame_id, m.child_frame_id, m.header.stamp = "map", "odom", rospy.Time(s)
    m.transform.translation.x, m.transform.translation.y = x, 0.5
    m.transform.rotation.z, m.transform.rotation.w = 0.6, 0.8
    core.set_transform(m, "test")
buf = tf_shm.Buffer(open_timeout=0)
got = buf.lookup_transform("odom", "map", 1.5)
want = core.lookup_transform_core("odom", "map", rospy.Time(1, 500000000))
assert type(got) is type(want), (type(got), type(want))
assert got.header.stamp == want.header.stamp and got.header.frame_id == want.header.frame_id
g, w = got.transform.translation, want.transform.translation
assert max(abs(g.x - w.x), abs(g.y - w.y), abs(g.z - w.z)) < 1e-12, (got, want)
arena.set_transform("sea", "island", 0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), "t", True)
m.header.frame_id, m.child_frame_id, m.header.stamp = "sea", "island", rospy.Time(0)
core.set_transform_static(m, "test")
def cls(call):
    try:
        call()
    except tf2_py.TransformException as e:
        return type(e)
caught = []
for ours, theirs in (
    (lambda: buf.lookup_transform("map", "ghost", 0),
     lambda: core.lookup_transform_core("map", "ghost", rospy.Time(0))),
    (lambda: buf.lookup_transform("map", "odom", 9.0),
     lambda: core.lookup_transform_core("map", "odom", rospy.Time(9))),
    (lambda: buf.get_latest_common_time("map", "island"),
     lambda: core.get_latest_common_time("map", "island")),
    (lambda: buf.get_latest_common_time("map", "ghost"),
     lambda: core.get_latest_common_time("map", "ghost")),
):
    assert cls(ours) is cls(theirs), (cls(ours), cls(theirs))
    caught.append(cls(ours).__name__)
print(" ".join(caught))
"""


def test_debian_tf2_py_classes_and_messages_are_used(tf_shm_package):
    """Where tf2_py is importable (Debian's python3-tf2), its classes are raised and results are
    its geometry_msgs messages, equal to its BufferCore's."""
    import tf_shm

    site = str(Path(tf_shm.__file__).resolve().parents[1])
    r = subprocess.run(
        ["/usr/bin/python3", "-c", DEBIAN_TF2_PY],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": site},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [
        "LookupException",
        "ExtrapolationException",
        "TransformException",
        "LookupException",
    ]


@pytest.fixture
def arena_buffer(tmp_path, monkeypatch, tf_shm_package):
    """A test-only arena (map -> odom, yaw 90 degrees, 1 m along x) and a tf_shm.Buffer on it."""
    import math

    monkeypatch.setenv("TF_SHM_RUNTIME_DIR", str(tmp_path))
    import tf_shm
    from tf_shm._testing import Arena

    arena = Arena(str(tmp_path))
    s = math.sqrt(0.5)
    for sec in (1, 2):
        arena.set_transform("map", "odom", sec * 10**9, (1.0, 0.0, 0.0), (0.0, 0.0, s, s))
    yield arena, tf_shm.Buffer(open_timeout=0)
    arena.close()


def test_transform_of_geometry_msgs_types(arena_buffer):
    """Buffer.transform gives what tf2_geometry_msgs gives: T_map_odom = 1 m along x, yaw 90°.
    As with tf2_ros, the node imports tf2_geometry_msgs, which registers these types."""
    import tf2_geometry_msgs  # noqa: F401
    from geometry_msgs.msg import (
        PointStamped,
        PoseStamped,
        TransformStamped,
        Vector3Stamped,
    )
    from rclpy.time import Time

    _, buffer = arena_buffer
    stamp = Time(seconds=1.5).to_msg()

    p = PointStamped()
    p.header.frame_id, p.header.stamp = "odom", stamp
    p.point.x, p.point.y, p.point.z = 1.0, 2.0, 3.0
    out = buffer.transform(p, "map")
    assert type(out) is PointStamped
    assert (out.header.frame_id, out.header.stamp) == ("map", stamp)
    assert [out.point.x, out.point.y, out.point.z] == pytest.approx([-1.0, 1.0, 3.0], abs=1e-12)

    v = Vector3Stamped()
    v.header.frame_id, v.header.stamp = "odom", stamp
    v.vector.x = 1.0
    out = buffer.transform(v, "map", timeout=Duration_ns(10**8))
    assert [out.vector.x, out.vector.y, out.vector.z] == pytest.approx([0.0, 1.0, 0.0], abs=1e-12)

    q = PoseStamped()
    q.header.frame_id, q.header.stamp = "odom", stamp
    q.pose.position.x = 1.0
    q.pose.orientation.w = 1.0
    out = buffer.transform(q, "map")
    o = out.pose.orientation
    assert [out.pose.position.x, out.pose.position.y] == pytest.approx([1.0, 1.0], abs=1e-12)
    assert [o.x, o.y, o.z, o.w] == pytest.approx([0.0, 0.0, 0.5**0.5, 0.5**0.5], abs=1e-12)

    t = TransformStamped()
    t.header.frame_id, t.header.stamp, t.child_frame_id = "odom", stamp, "tool"
    t.transform.translation.y = 1.0
    t.transform.rotation.w = 1.0
    # tf2_geometry_msgs registers no TransformStamped: through tf2_ros's registration the
    # buffer raises tf2_ros's TypeException, as a tf2_ros Buffer does (tf_shm's built-in
    # registry, with TransformStamped, serves environments without tf2_ros).
    import tf2_ros

    with pytest.raises(tf2_ros.TypeException):
        buffer.transform(t, "map")
    with pytest.raises(tf2_ros.TypeException):
        tf2_ros.Buffer().transform(t, "map")


def Duration_ns(ns):
    from rclpy.duration import Duration

    return Duration(nanoseconds=ns)


def test_rclpy_futures(arena_buffer):
    """wait_for_transform_async gives an rclpy Future; lookup_transform_async is awaitable in
    an rclpy executor; both complete when the data arrives."""
    if [n for _, n in __import__("socket").if_nameindex()] != ["lo"]:
        pytest.skip("rclpy runs only in a loopback-only network namespace (scripts/test.sh's)")
    import threading

    import rclpy
    import tf_shm
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.task import Future

    arena, _ = arena_buffer
    rclpy.init()
    try:
        node = rclpy.create_node("tf_shm_futures")
        buffer = tf_shm.Buffer(node=node, open_timeout=0)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        fut = buffer.wait_for_transform_async("map", "cam", 0)
        assert isinstance(fut, Future) and not fut.done()
        task = executor.create_task(buffer.lookup_transform_async("map", "cam", 0))
        timer = threading.Timer(
            0.3,
            lambda: arena.set_transform("odom", "cam", 0, (0, 0, 1.0), (0, 0, 0, 1.0), "t", True),
        )
        timer.start()
        executor.spin_until_future_complete(task, timeout_sec=10)
        timer.join()
        assert task.done(), "lookup_transform_async did not complete"
        assert task.result().transform.translation.z == pytest.approx(1.0)
        executor.spin_until_future_complete(fut, timeout_sec=10)
        assert fut.result().child_frame_id == "cam"
    finally:
        rclpy.try_shutdown()
