"""The launch files under the real `ros2 launch` (ROS 2 Jazzy's launch, launch_ros and ros2cli,
installed by scripts/ros-env.sh), with tf_shm_bridge built and installed by colcon as a user does
(`colcon build --cargo-args --release`, then the install's local_setup.sh).

Each test checks effects, not what the launch file asks for: the arena the `tf_shm` command
opens (name, domain, runtime dir), the node's name and namespace (`ros2 node list`), its
parameters (`ros2 param get`), the topics it subscribes (a transform published there with
`ros2 topic pub` read back from the arena; `ros2 topic info`), its log level (its own debug line),
and Ctrl-C (SIGINT to `ros2 launch`: exit 0, every socket removed).

Every ros2 command runs with --no-daemon (or needs no daemon), so no ros2 daemon outlives a test.
The colcon build reuses the bridge's Cargo target dir (the session's `bridge_bin` build), so it
costs colcon's own time, not a second build of r2r.

Run: scripts/ros-env.sh run python3 -m pytest tests/ros/test_launch.py   (as root; ROS processes
run in a loopback-only network namespace).
"""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from harness import TF_SHM

ROOT = Path(__file__).resolve().parents[2]
PARAMS = ROOT / "config" / "tf_shm_bridge.yaml"
ARGUMENTS = {"params_file", "arena_name", "domain", "namespace", "log_level", "use_sim_time"}


@pytest.fixture(scope="module")
def installed(bridge_bin, built, tmp_path_factory):
    """tf_shm_bridge built and installed by colcon; the environment its local_setup.sh gives."""
    ws = tmp_path_factory.mktemp("colcon")
    # colcon-ros-cargo builds with --target-dir <build base>/<package>: pointing that at the
    # target dir the bridge was built in lets cargo find everything up to date (it builds the
    # package alone, as `bridge_bin` does, so with the same features of every dependency).
    (ws / "build").mkdir()
    (ws / "build" / "tf_shm_bridge").symlink_to(Path(bridge_bin).parents[1])
    r = subprocess.run(
        [
            "colcon",
            "--log-base",
            str(ws / "log"),
            "build",
            "--packages-select",
            "tf_shm_bridge",
            "--base-paths",
            str(ROOT),
            "--build-base",
            str(ws / "build"),
            "--install-base",
            str(ws / "install"),
            "--cargo-args",
            "--release",
        ],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert r.returncode == 0, f"colcon build failed:\n{r.stdout}\n{r.stderr}"
    share = ws / "install" / "tf_shm_bridge" / "share" / "tf_shm_bridge"
    for f in ("launch/tf_shm_bridge.launch.py", "launch/two_robots.launch.py", "config/"):
        assert (share / f).exists(), f"colcon did not install {f}"
    out = subprocess.run(
        ["bash", "-c", '. "$0" && env -0', str(ws / "install" / "local_setup.sh")],
        capture_output=True,
        check=True,
    ).stdout
    env = dict(v.split("=", 1) for v in out.decode().split("\0") if "=" in v)
    return {"share": share, "env": {k: v for k, v in env.items() if os.environ.get(k) != v}}


class Ros:
    """One test's `ros2 launch` runs and ros2 commands, in the world's netns, runtime dir and
    DDS domain, with the colcon install sourced."""

    def __init__(self, world, installed):
        self.world = world
        self.env = dict(world.env, **installed["env"])
        self.domain = self.env["ROS_DOMAIN_ID"]
        self.launches = []

    def launch(self, *args, name="launch"):
        log = self.world.dir / f"{name}.log"
        with open(log, "w") as out:
            p = subprocess.Popen(
                [*self.world.netns, "ros2", "launch", *args],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,  # teardown kills the whole group, bridges included
            )
        p.log = log
        self.launches.append(p)
        return p

    def socket(self, name, domain=None):
        return (
            self.world.runtime
            / str(domain if domain is not None else self.domain)
            / (f"{name}.sock")
        )

    def wait_serving(self, launch, *sockets, timeout=60):
        end = time.monotonic() + timeout
        while not all(s.exists() for s in sockets):
            assert launch.poll() is None, (
                f"ros2 launch exited with {launch.returncode}:\n{launch.log.read_text()}"
            )
            assert time.monotonic() < end, (
                f"no {[str(s) for s in sockets if not s.exists()]} after {timeout} s:\n"
                f"{launch.log.read_text()}"
            )
            time.sleep(0.1)

    def ctrl_c(self, launch, *sockets):
        """SIGINT to `ros2 launch`, as Ctrl-C: it must exit 0 and every socket be gone."""
        launch.send_signal(signal.SIGINT)
        code = launch.wait(timeout=30)
        text = launch.log.read_text()
        assert code == 0, f"ros2 launch exit {code} after SIGINT:\n{text}"
        left = [str(s) for s in sockets if s.exists()]
        assert not left, f"sockets left after Ctrl-C: {left}\n{text}"
        return text

    def ros2(self, *args, timeout=60):
        r = subprocess.run(
            [*self.world.netns, "ros2", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert r.returncode == 0, f"ros2 {' '.join(args)}: exit {r.returncode}\n{r.stderr}"
        return r.stdout

    def until(self, what, probe, timeout=30):
        """Polls probe() until it returns something true (discovery takes a moment)."""
        end = time.monotonic() + timeout
        while True:
            got = probe()
            if got:
                return got
            assert time.monotonic() < end, f"{what} not seen in {timeout} s"
            time.sleep(0.2)

    def nodes(self, *expected):
        """`ros2 node list` once it lists every expected node."""
        return self.until(
            f"nodes {expected}",
            lambda: (
                (names := self.ros2("node", "list", "--no-daemon", "--spin-time", "1").split())
                and set(expected) <= set(names)
                and names
            ),
        )

    def subscriptions(self, topic):
        """The subscription count `ros2 topic info` gives, once it knows the topic at all."""

        def count():
            r = subprocess.run(
                [
                    *self.world.netns,
                    "ros2",
                    "topic",
                    "info",
                    "--no-daemon",
                    "--spin-time",
                    "1",
                    topic,
                ],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            found = re.search(r"^Subscription count: (\d+)$", r.stdout, re.MULTILINE)
            return found and int(found.group(1)) + 1

        return self.until(f"topic {topic}", count) - 1

    def param(self, node, name):
        return self.ros2("param", "get", "--no-daemon", "--timeout", "10", node, name).strip()

    def publish(self, topic, parent, child, x, stamp_s=0, static=False):
        """One TFMessage on `topic` with `ros2 topic pub`, once the bridge subscribes to it."""
        msg = {
            "transforms": [
                {
                    "header": {"stamp": {"sec": stamp_s}, "frame_id": parent},
                    "child_frame_id": child,
                    "transform": {"translation": {"x": x}, "rotation": {"w": 1.0}},
                }
            ]
        }
        qos = ["--qos-durability", "transient_local"] if static else []
        self.ros2(
            "topic",
            "pub",
            "--once",
            "-w",
            "1",
            "--max-wait-time-secs",
            "30",
            "--keep-alive",
            "1",
            *qos,
            topic,
            "tf2_msgs/msg/TFMessage",
            json.dumps(msg),
        )

    def lookup(self, target, source, *where):
        """`tf_shm lookup --json` (no ROS); None while the arena has no such transform."""
        r = subprocess.run(
            [TF_SHM, "--json", *where, "lookup", target, source],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return json.loads(r.stdout) if r.returncode == 0 else None

    def looked_up(self, target, source, *where):
        return self.until(
            f"T_{target}_{source} in arena {where}", lambda: self.lookup(target, source, *where)
        )

    def close(self):
        for p in self.launches:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


@pytest.fixture
def ros(world, installed):
    r = Ros(world, installed)
    yield r
    r.close()


def translation_x(answer):
    return answer["translation_m"][0]


def test_launch_file_declares_the_documented_arguments(ros, installed):
    out = ros.ros2("launch", "tf_shm_bridge", "tf_shm_bridge.launch.py", "--show-args")
    declared = re.findall(r"^    '(\w+)':\n        \S.*\n        \(default: ", out, re.MULTILINE)
    assert sorted(declared) == sorted(ARGUMENTS), out
    params = installed["share"] / "config" / "tf_shm_bridge.yaml"
    assert f"'{params}'" in out, f"params_file does not default to the installed file:\n{out}"
    readme = (ROOT / "README.md").read_text()
    for name in ARGUMENTS:
        assert f"{name}:=" in readme, f"README does not document launch argument {name}"


def test_launch_with_defaults(ros):
    """No arguments: the params file's arena "default" in $ROS_DOMAIN_ID's directory, node
    /tf_shm_bridge on /tf, info level, use_sim_time false."""
    sock = ros.socket("default")
    launch = ros.launch("tf_shm_bridge", "tf_shm_bridge.launch.py")
    ros.wait_serving(launch, sock)
    assert "/tf_shm_bridge" in ros.nodes("/tf_shm_bridge")
    assert ros.param("/tf_shm_bridge", "use_sim_time") == "Boolean value is: False"
    assert ros.param("/tf_shm_bridge", "cache_time") == "Double value is: 10.0"
    ros.publish("/tf", "map", "odom", 1.5, stamp_s=3)
    answer = ros.looked_up("map", "odom")
    assert (translation_x(answer), answer["stamp_ns"]) == (1.5, 3 * 10**9), answer
    text = ros.ctrl_c(launch, sock)
    assert re.search(r"\[INFO\] \[\d+\.\d+\] \[tf_shm_bridge\]: serving arena ", text), text
    assert "[DEBUG]" not in text, text


def test_launch_with_every_argument(ros, tmp_path):
    """arena_name, domain, namespace, log_level (LOGGER:=LEVEL), use_sim_time, params_file: each
    reaches the bridge; arena_name and domain win over the params file, its other values hold."""
    mine = yaml.safe_load(PARAMS.read_text())
    mine["/**"]["ros__parameters"].update(arena_name="from_file", cache_time=4.5)
    params_file = tmp_path / "mine.yaml"
    params_file.write_text(yaml.safe_dump(mine))
    sock = ros.socket("robot1", domain=7)
    launch = ros.launch(
        "tf_shm_bridge",
        "tf_shm_bridge.launch.py",
        "arena_name:=robot1",
        "domain:=7",
        "namespace:=robot1",
        "log_level:=robot1.tf_shm_bridge:=debug",
        "use_sim_time:=true",
        f"params_file:={params_file}",
    )
    ros.wait_serving(launch, sock)
    node = "/robot1/tf_shm_bridge"
    assert "/tf_shm_bridge" not in ros.nodes(node)
    assert ros.param(node, "arena_name") == "String value is: robot1"
    assert ros.param(node, "domain") == "Integer value is: 7"
    assert ros.param(node, "use_sim_time") == "Boolean value is: True"
    assert ros.param(node, "cache_time") == "Double value is: 4.5"
    assert ros.subscriptions("/robot1/tf") == 1
    ros.publish("/robot1/tf_static", "world", "robot1/base", 2.0, static=True)
    answer = ros.looked_up("world", "robot1/base", "--name", "robot1", "--domain", "7")
    assert translation_x(answer) == 2.0, answer
    text = ros.ctrl_c(launch, sock)
    assert re.search(
        r"\[DEBUG\] \[\d+\.\d+\] \[robot1\.tf_shm_bridge\]: logger robot1\.tf_shm_bridge; ", text
    ), text
    assert "[rcl]" not in text, f"the level was set for the bridge's logger only:\n{text}"


def test_include_under_push_ros_namespace(ros, tmp_path):
    """A user's launch file includes ours under PushROSNamespace: the bridge is /robot3/..., and
    serves /robot3/tf (the relative remapping), not /tf."""
    outer = tmp_path / "robot3.launch.py"
    outer.write_text(
        "from launch import LaunchDescription\n"
        "from launch.actions import GroupAction, IncludeLaunchDescription\n"
        "from launch.launch_description_sources import PythonLaunchDescriptionSource\n"
        "from launch.substitutions import PathJoinSubstitution\n"
        "from launch_ros.actions import PushROSNamespace\n"
        "from launch_ros.substitutions import FindPackageShare\n"
        "\n"
        "\n"
        "def generate_launch_description():\n"
        "    bridge = PathJoinSubstitution(\n"
        '        [FindPackageShare("tf_shm_bridge"), "launch", "tf_shm_bridge.launch.py"]\n'
        "    )\n"
        "    return LaunchDescription([GroupAction([\n"
        '        PushROSNamespace("robot3"),\n'
        "        IncludeLaunchDescription(PythonLaunchDescriptionSource(bridge)),\n"
        "    ])])\n"
    )
    sock = ros.socket("default")
    launch = ros.launch(str(outer))
    ros.wait_serving(launch, sock)
    assert "/tf_shm_bridge" not in ros.nodes("/robot3/tf_shm_bridge")
    ros.publish("/robot3/tf", "map", "robot3/base", 3.0, stamp_s=5)
    assert translation_x(ros.looked_up("map", "robot3/base")) == 3.0
    ros.ctrl_c(launch, sock)


def test_two_robots(ros):
    """two_robots.launch.py: /robot1/tf_shm_bridge and /robot2/tf_shm_bridge, each serving its
    robot's topics as its own arena; Ctrl-C stops both."""
    socks = [ros.socket("robot1"), ros.socket("robot2")]
    launch = ros.launch("tf_shm_bridge", "two_robots.launch.py")
    ros.wait_serving(launch, *socks)
    ros.nodes("/robot1/tf_shm_bridge", "/robot2/tf_shm_bridge")
    ros.publish("/robot2/tf_static", "world", "robot2/base", 4.0, static=True)
    assert translation_x(ros.looked_up("world", "robot2/base", "--name", "robot2")) == 4.0
    assert ros.lookup("world", "robot2/base", "--name", "robot1") is None
    ros.ctrl_c(launch, *socks)
