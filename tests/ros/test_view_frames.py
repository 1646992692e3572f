"""The bridge serves `tf2_frames` (tf2_msgs/srv/FrameGraph) from the arena, so `ros2 run tf2_tools
view_frames` draws the bridge's tree.

Real processes in a loopback-only network namespace (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST):
the bridge, a publisher (tests/ros/tf_faults_publisher.py, `live` and `statics`), an rclpy client
of `tf2_frames`, and Jazzy's own view_frames. The expected tree is the arena's, read by
`tf_shm tree --json`.

view_frames creates a tf2_ros Buffer with its node, which serves `tf2_frames` too (in the same,
root, namespace): its request is answered by both, and it draws the first answer. The first test
asks with a plain client while only the bridge serves, so the answer is the bridge's; the second
runs view_frames while the same transforms are on /tf, so either answer describes the arena's tree.

Run: scripts/ros-env.sh run python3 -m pytest tests/ros/test_view_frames.py   (as root)
"""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml
from harness import BIN

PUB = str(Path(__file__).with_name("tf_faults_publisher.py"))
CLIENT = """
import rclpy
from tf2_msgs.srv import FrameGraph

rclpy.init()
node = rclpy.create_node("frames_probe")
client = node.create_client(FrameGraph, "tf2_frames")
assert client.wait_for_service(timeout_sec=20), "no tf2_frames service"
future = client.call_async(FrameGraph.Request())
rclpy.spin_until_future_complete(node, future, timeout_sec=20)
print(future.result().frame_yaml)
"""


def arena_tree(world):
    """{child: (parent, authority)} of every frame with a parent, from `tf_shm tree --json`."""
    out = subprocess.run(
        [str(BIN / "tf_shm"), "--json", "tree"],
        env=world.env,
        capture_output=True,
        text=True,
        check=True,
        timeout=20,
    ).stdout
    return {
        f["name"]: (f["parent"], f["authority"]) for f in json.loads(out)["frames"] if f["parent"]
    }


def start_publishers(world):
    live = world.start([sys.executable, PUB, "live", "20"], "pub_live")
    statics = world.start([sys.executable, PUB, "statics", "3"], "pub_statics")
    for p in (live, statics):
        assert p.stdout.readline().strip() == "up", p.err.read_text()


def wait_for_frames(world, n, timeout=30):
    end = time.monotonic() + timeout
    while True:
        tree = arena_tree(world)
        if len(tree) >= n:
            return tree
        assert time.monotonic() < end, f"the arena has {tree} after {timeout} s"
        time.sleep(0.2)


def test_the_bridge_answers_tf2_frames_with_the_arenas_yaml(built, bridge_bin, world):
    bridge = world.bridge(bridge_bin)
    world.wait_serving(bridge)
    start_publishers(world)
    # map -> base_link (dynamic), base_link -> sensor, static_0..2 (static).
    wait_for_frames(world, 5)
    out = subprocess.run(
        world.netns + [sys.executable, "-c", CLIENT],
        env=world.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    data = yaml.safe_load(out.stdout)
    tree = arena_tree(world)
    assert {k: v["parent"] for k, v in data.items()} == {k: p for k, (p, _) in tree.items()}
    assert {k: v["broadcaster"] for k, v in data.items()} == {k: a for k, (_, a) in tree.items()}
    # tf2's allFramesAsYAML() at time zero: no transform_delay, a static frame at rate 10000.
    assert "transform_delay" not in out.stdout
    assert data["sensor"]["rate"] == 10000.0
    assert data["base_link"]["most_recent_transform"] > 0
    world.stop(bridge)


def view_frames_draws_the_arenas_tree(world, bridge_bin, tmp_path, command):
    """Runs `command` (a view_frames, given `-o <tmp_path>/frames`) against the bridge with the
    publishers' tree; its .gv must be the arena's tree and its PDF a PDF."""
    bridge = world.bridge(bridge_bin)
    world.wait_serving(bridge)
    start_publishers(world)
    wait_for_frames(world, 5)
    run = subprocess.run(
        world.netns + [*command, "-o", str(tmp_path / "frames")],
        env=world.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    gv = (tmp_path / "frames.gv").read_text()
    edges = {child: parent for parent, child in re.findall(r'"([^"]+)" -> "([^"]+)"\[label', gv)}
    assert edges == {k: p for k, (p, _) in arena_tree(world).items()}, gv
    assert (tmp_path / "frames.pdf").read_bytes().startswith(b"%PDF-")
    world.stop(bridge)


def test_view_frames_draws_the_arenas_tree(built, bridge_bin, world, tmp_path):
    # view_frames' own buffer answers too (first answer wins): give it view_frames' default 5 s
    # to hear the tree, or its answer can be empty (DDS matching takes seconds).
    command = ["ros2", "run", "tf2_tools", "view_frames", "-t", "5"]
    view_frames_draws_the_arenas_tree(world, bridge_bin, tmp_path, command)


def test_view_frames_ported_by_imports_draws_the_bridges_tree(built, bridge_bin, world, tmp_path):
    """Jazzy's view_frames with `tf2_ros` replaced by `tf_shm` (a port by imports, issue 31): its
    Buffer(node=...) serves no tf2_frames of its own, so the bridge's service is the only one
    that answers; it finishes and writes the arena's tree."""
    import tf2_tools.view_frames

    source = Path(tf2_tools.view_frames.__file__).read_text()
    ported = tmp_path / "view_frames_tf_shm.py"
    ported.write_text(source.replace("tf2_ros", "tf_shm"))
    assert "import tf_shm" in ported.read_text()
    command = [sys.executable, str(ported), "-t", "1"]
    view_frames_draws_the_arenas_tree(world, bridge_bin, tmp_path, command)
