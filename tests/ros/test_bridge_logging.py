"""The bridge logs like a ROS 2 node: through rcutils under its logger name, so its lines reach
the console in ROS's format, the node's log file and /rosout, and `--ros-args --log-level` (global
or per logger) sets what is printed.

Run: scripts/ros-env.sh run python3 -m pytest tests/ros   (as root; ROS processes run in a
loopback-only network namespace).
"""

import json
import re
import sys
from pathlib import Path

import pytest

# The node's own debug line at start (src/main.rs), and its first info line.
DEBUG_LINE = re.compile(
    r"^\[DEBUG\] \[\d+\.\d+\] \[tf_shm_bridge\]: logger tf_shm_bridge; settings ", re.MULTILINE
)
INFO_LINE = re.compile(r"^\[INFO\] \[\d+\.\d+\] \[tf_shm_bridge\]: serving arena ", re.MULTILINE)
RCL_DEBUG = re.compile(r"^\[DEBUG\] \[\d+\.\d+\] \[rcl\]: ", re.MULTILINE)


def run_bridge(world, bridge_bin, *ros_args):
    proc = world.bridge(bridge_bin, *ros_args)
    world.wait_serving(proc)
    return world.stop(proc)


def node_log_file(world):
    files = sorted(world.log_dir.glob("tf_shm_bridge_*.log"))
    assert len(files) == 1, f"expected one log file of the node in {world.log_dir}: {files}"
    return files[0].read_text()


@pytest.mark.parametrize(
    "ros_args, debug, info, rcl_debug",
    [
        ((), False, True, False),
        (("--log-level", "debug"), True, True, True),
        (("--log-level", "tf_shm_bridge:=debug"), True, True, False),
        (("--log-level", "warn"), False, False, False),
        (
            ("--log-level", "debug", "-p", "log_level:=info"),
            False,
            True,
            True,
        ),  # the parameter alias
    ],
)
def test_log_level_from_ros_args(world, bridge_bin, ros_args, debug, info, rcl_debug):
    err = run_bridge(world, bridge_bin, *ros_args)
    assert bool(DEBUG_LINE.search(err)) == debug, err
    assert bool(INFO_LINE.search(err)) == info, err
    assert bool(RCL_DEBUG.search(err)) == rcl_debug, err
    assert "\x1b[" not in err, "colour codes written to a pipe"
    # The node's log file (rcl_logging_spdlog) gets the same lines.
    log = node_log_file(world)
    assert bool(DEBUG_LINE.search(log)) == debug and bool(INFO_LINE.search(log)) == info, log


def test_bad_log_level_is_refused(world, bridge_bin):
    proc = world.bridge(bridge_bin, "-p", "log_level:=verbose")
    assert proc.wait(timeout=20) != 0
    err = proc.err.read_text()
    assert 'log_level "verbose"' in err and "debug, info, warn, error or fatal" in err, err


def test_warning_reaches_rosout(world, bridge_bin):
    """A transform with a NaN is refused with a warning (tf2's TF_NAN_INPUT); an rclpy node
    reads that warning from /rosout, under the bridge's logger name and at WARN."""
    bridge = world.bridge(bridge_bin)
    world.wait_serving(bridge)
    probe = world.start(
        [
            sys.executable,
            str(Path(__file__).with_name("rosout_probe.py")),
            "--logger",
            "tf_shm_bridge",
            "--child-frame",
            "nan_probe_frame",
            "--timeout",
            "40",
        ],
        "probe",
    )
    out, _ = probe.communicate(timeout=60)
    assert probe.returncode == 0, f"{probe.err.read_text()}\n--- bridge:\n{bridge.err.read_text()}"
    log = json.loads(out.strip().splitlines()[-1])
    assert log["name"] == "tf_shm_bridge" and log["level"] == 30, log  # rcl_interfaces/Log WARN
    assert "nan_probe_frame" in log["msg"], log
    assert log["file"].endswith(".rs") and log["line"] > 0, log
    err = world.stop(bridge)
    assert re.search(
        r"^\[WARN\] \[\d+\.\d+\] \[tf_shm_bridge\]: .*nan_probe_frame", err, re.MULTILINE
    ), err


def test_namespaced_logger(world, bridge_bin):
    """In a namespace the node's logger is NS.tf_shm_bridge, as for rclcpp nodes; per-logger
    levels name it so."""
    err = run_bridge(
        world, bridge_bin, "-r", "__ns:=/robot1", "--log-level", "robot1.tf_shm_bridge:=debug"
    )
    assert re.search(
        r"^\[DEBUG\] \[\d+\.\d+\] \[robot1\.tf_shm_bridge\]: logger robot1\.tf_shm_bridge; ",
        err,
        re.MULTILINE,
    ), err
