"""Shared fixtures of the ROS tests: the built bridge, a loopback-only network namespace, and one
bridge run with its own runtime dir, ROS log dir and DDS domain.

Every ROS process runs with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST in a network namespace that
has only loopback (the `netns` fixture of tests/conftest.py).
"""

import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release"
BRIDGE = str(BIN / "tf_shm_bridge")
PARAMS = ROOT / "config" / "tf_shm_bridge.yaml"


@pytest.fixture(scope="session")
def bridge_bin():
    if os.environ.get("TF_SHM_E2E_NO_BUILD") != "1":
        subprocess.run(
            ["cargo", "build", "-q", "--release", "-p", "tf_shm_bridge"],
            cwd=ROOT,
            check=True,
            timeout=1200,
        )
    assert os.access(BRIDGE, os.X_OK), f"{BRIDGE} not built"
    return BRIDGE


class World:
    """A test's private runtime dir, ROS log dir and DDS domain, and the processes it started."""

    def __init__(self, netns):
        self.dir = Path(tempfile.mkdtemp(prefix="tfros-"))
        self.netns = netns
        self.procs = []
        self.runtime = self.dir / "rt"
        self.runtime.mkdir(mode=0o700)
        self.log_dir = self.dir / "roslog"
        self.env = dict(
            os.environ,
            ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
            TF_SHM_RUNTIME_DIR=str(self.runtime),
            ROS_LOG_DIR=str(self.log_dir),
            ROS_DOMAIN_ID=str(random.randint(101, 200)),
        )
        for var in (
            "ROS_LOCALHOST_ONLY",
            "RCUTILS_COLORIZED_OUTPUT",
            "RCUTILS_CONSOLE_OUTPUT_FORMAT",
        ):
            self.env.pop(var, None)

    def start(self, argv, name):
        # The process gets its own copy of the descriptor: ours is closed once it started.
        with open(self.dir / f"{name}.err", "w") as err:
            p = subprocess.Popen(
                self.netns + argv, env=self.env, stdout=subprocess.PIPE, stderr=err, text=True
            )
        p.name, p.err = name, self.dir / f"{name}.err"
        self.procs.append(p)
        return p

    def bridge(self, bridge_bin, *ros_args, name="bridge"):
        return self.start([bridge_bin, "--ros-args", "--params-file", str(PARAMS), *ros_args], name)

    def wait_serving(self, proc, timeout=20):
        """Waits for the bridge's socket (it is serving), failing early if the bridge exits."""
        end = time.monotonic() + timeout
        while not list(self.runtime.glob("*/*.sock")):
            assert proc.poll() is None, (
                f"{proc.name} exited with {proc.returncode}:\n{proc.err.read_text()}"
            )
            assert time.monotonic() < end, (
                f"{proc.name} not serving after {timeout} s:\n{proc.err.read_text()}"
            )
            time.sleep(0.05)

    def stop(self, proc):
        """SIGINT, as Ctrl-C; returns what the process wrote to stderr. It must exit 0."""
        # The bridge watches SIGINT from its first turn of the main loop, a moment after the
        # socket appears; a signal before that ends it by the default action.
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=15)
        text = proc.err.read_text()
        assert code == 0, f"{proc.name} exit {code} after SIGINT:\n{text}"
        return text

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def world(netns):
    w = World(netns)
    yield w
    w.close()
