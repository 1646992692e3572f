"""The end-to-end tests' harness, shared by tests/e2e and tests/ros: where the binaries are, one
test's world of processes (`Run`; the `run` fixture of tests/conftest.py), polling, the arena's
tree.

Every process a `Run` starts gets ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and runs in the
loopback-only network namespace of the `netns` fixture. TF_SHM_TEST_BRIDGE names another bridge
binary to test (e.g. one built from an older commit, for before/after measurements).
"""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release"
TF_SHM = str(BIN / "tf_shm")
BRIDGE = os.environ.get("TF_SHM_TEST_BRIDGE", str(BIN / "tf_shm_bridge"))
PARAMS = ROOT / "config" / "tf_shm_bridge.yaml"
# The PR2 publisher's first stamp (scripts/pr2_publisher.py --stamp-base), ns.
STAMP_BASE_NS = 1000 * 10**9


def build():
    """Builds what the end-to-end tests run (unless TF_SHM_E2E_NO_BUILD=1): the bridge, the CLI
    and the latency probe."""
    if os.environ.get("TF_SHM_E2E_NO_BUILD") != "1":
        for args in (
            ["-p", "tf_shm_bridge", "-p", "tf_shm_cli"],
            ["-p", "tf_shm", "--example", "latency_probe"],
        ):
            subprocess.run(
                ["cargo", "build", "-q", "--release", *args], cwd=ROOT, check=True, timeout=1200
            )
    for b in (TF_SHM, BRIDGE):
        assert os.access(b, os.X_OK), f"{b} not built"


class Run:
    """One test's world: a fresh runtime dir and DDS domain, its processes and their logs."""

    def __init__(self, netns):
        self.dir = Path(tempfile.mkdtemp(prefix="tfe2e-"))
        self.netns = netns
        self.procs = []
        self.env = dict(
            os.environ,
            ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
            TF_SHM_RUNTIME_DIR=str(self.dir / "rt"),
            NO_COLOR="1",
            ROS_DOMAIN_ID=str(random.randint(10, 100)),
        )
        self.env.pop("ROS_LOCALHOST_ONLY", None)
        (self.dir / "rt").mkdir(mode=0o700)

    def start(self, name, argv, **kw):
        # The process gets its own copy of the log's descriptor: ours is closed once it started.
        with open(self.dir / f"{name}.log", "a") as log:
            p = subprocess.Popen(
                self.netns + argv, env=self.env, stdout=kw.pop("stdout", log), stderr=log, **kw
            )
        p.name, p.log = name, self.dir / f"{name}.log"
        self.procs.append(p)
        return p

    def bridge(self, name="bridge"):
        return self.start(name, [BRIDGE, "--ros-args", "--params-file", str(PARAMS)])

    def publisher(self, log="pub.jsonl", duration=60):
        return self.start(
            "publisher",
            [
                sys.executable,
                str(ROOT / "scripts" / "pr2_publisher.py"),
                "--stamp-base",
                str(STAMP_BASE_NS / 1e9),
                "--duration",
                str(duration),
                "--log",
                str(self.dir / log),
            ],
        )

    def cli(self, *args, timeout=20):
        return subprocess.run(
            self.netns + [TF_SHM, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,  # the callers look at the exit code
        )

    def logs(self):
        return "\n".join(
            f"--- {p.name} (exit {p.poll()}):\n{p.log.read_text()[-3000:]}" for p in self.procs
        )

    def check_alive(self, *procs):
        for p in procs:
            assert p.poll() is None, f"{p.name} exited with {p.returncode}\n{self.logs()}"

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_for(what, fn, timeout, run=None, interval=0.1):
    """Polls fn() until it returns a truthy value; fails with `what` after timeout seconds."""
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > end:
            pytest.fail(
                f"timed out after {timeout} s waiting for {what}\n{run.logs() if run else ''}"
            )
        time.sleep(interval)


def tree(run):
    r = run.cli("--json", "tree")
    return {f["name"]: f for f in json.loads(r.stdout)["frames"]} if r.returncode == 0 else None
