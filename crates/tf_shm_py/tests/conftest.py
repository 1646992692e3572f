"""Fixtures of the tf_shm Python tests: a private rendezvous directory per test, an arena
written through the test-only owner (standing in for tf_shm_bridge), and a Buffer on it."""

import math
import subprocess
import sys

import pytest
from processes import WRITER

NS = 1_000_000_000


@pytest.fixture
def runtime_dir(tmp_path, monkeypatch):
    d = tmp_path / "rt"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("TF_SHM_RUNTIME_DIR", str(d))
    monkeypatch.delenv("ROS_DOMAIN_ID", raising=False)
    return str(d)


@pytest.fixture
def writer(runtime_dir):
    """A live arena in `runtime_dir`, written by another process until the test ends (which
    checks the writer was up throughout)."""
    p = subprocess.Popen([sys.executable, "-c", WRITER, runtime_dir])
    yield p
    alive = p.poll() is None
    p.kill()
    p.wait()
    assert alive, "the writer exited"


@pytest.fixture
def arena(runtime_dir):
    from tf_shm._testing import Arena

    a = Arena(runtime_dir)
    yield a
    a.close()


@pytest.fixture
def buffer(arena):
    import tf_shm

    return tf_shm.Buffer(open_timeout=0)


def yaw_q(yaw):
    """Quaternion (x, y, z, w) of a rotation by ``yaw`` rad about z."""
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


def q_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by + ay * bw + az * bx - ax * bz,
        aw * bz + az * bw + ax * by - ay * bx,
        aw * bw - ax * bx - ay * by - az * bz,
    )


def q_rot(q, v):
    """``q · v · q*`` for a unit ``q``."""
    x, y, z, _ = q_mul(q_mul(q, (v[0], v[1], v[2], 0.0)), (-q[0], -q[1], -q[2], q[3]))
    return (x, y, z)


def compose(a, b):
    """``a · b`` of (translation, rotation) pairs."""
    r = q_rot(a[1], b[0])
    return ((a[0][0] + r[0], a[0][1] + r[1], a[0][2] + r[2]), q_mul(a[1], b[1]))


def inverse(a):
    qi = (-a[1][0], -a[1][1], -a[1][2], a[1][3])
    t = q_rot(qi, a[0])
    return ((-t[0], -t[1], -t[2]), qi)


def assert_tf(actual, expected, tol=1e-12):
    """``actual`` = (translation, rotation); rotations compared up to sign."""
    (t, q), (et, eq) = actual, expected
    assert all(abs(a - b) <= tol for a, b in zip(t, et)), (t, et)
    dot = abs(sum(a * b for a, b in zip(q, eq)))
    assert abs(dot - 1.0) <= tol, (q, eq)
