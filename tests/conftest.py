"""Fixtures shared by tests/ros and tests/e2e (their harness is tests/harness.py)."""

import os
import socket
import subprocess

import pytest
from harness import Run, build


@pytest.fixture(scope="session")
def netns():
    """Command prefix that runs a process in a loopback-only network namespace."""
    if [n for _, n in socket.if_nameindex()] == ["lo"]:
        yield []  # already isolated (scripts/test.sh runs pytest under unshare -n)
        return
    if os.geteuid() != 0:
        pytest.fail("needs root for a loopback-only network namespace (unshare -n)")
    holder = subprocess.Popen(
        ["unshare", "-n", "sh", "-c", "ip link set lo up && echo up && exec sleep 86400"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "up", "could not set up the network namespace"
    prefix = ["nsenter", f"--net=/proc/{holder.pid}/ns/net", "--"]
    links = subprocess.run(
        prefix + ["ip", "-o", "link"], capture_output=True, text=True, check=True
    ).stdout
    assert [line.split(":")[1].strip() for line in links.splitlines()] == ["lo"], links
    yield prefix
    holder.kill()
    holder.wait()


@pytest.fixture(scope="session")
def built():
    """The bridge, the CLI and the latency probe, built once per session."""
    build()


@pytest.fixture
def run(built, netns):
    """One test's world (`harness.Run`): its processes are stopped and its files removed after."""
    r = Run(netns)
    yield r
    r.close()
