"""tf2_ros_py's own test suite (geometry2's ``tf2_ros_py/test``, ROS 2 Jazzy) run against
tf_shm: each test file copied with ``tf2_ros`` replaced by ``tf_shm`` (the port a user makes) and
run by pytest in a child process, every test's outcome checked against the same suite run
unchanged on tf2_ros (so a test that fails in this environment for tf2_ros too, e.g. for its
messages, is compared, not hidden).

tf_shm's buffer is read-only: what tf2_ros's tests write with ``Buffer.set_transform`` goes, in
the copy, into a fresh test arena per test (``tf_shm._testing.Arena``, the bridge's stand-in),
as a ``/tf`` message would reach the bridge. Tests that cannot apply are listed with the reason:
``DOES_NOT_APPLY`` are run (they fail on tf_shm for that reason; a pass is a race won and is
not counted), ``NOT_RUN`` would wait forever on tf_shm and are deselected. Needs the ROS
environment and ``TF_SHM_ROS_SOURCES`` (about 20 s: the suite runs twice).
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

SUITE = "geometry2/tf2_ros_py/test"

# Every test of the suite, by file: expected to pass on tf_shm unless listed below.
DOES_NOT_APPLY = {
    # The transform arrives in another process (the bridge) and tf_shm's future completes on a
    # waiter thread: tf2_ros completes it inside set_transform, in the caller's thread, and
    # the test resumes the coroutine at once, with no executor in between.
    "test_buffer.py::TestBuffer::test_await_transform_delayed": "completes in set_transform",
    "test_buffer.py::TestBuffer::test_await_transform_full_delayed": "completes in set_transform",
}
NOT_RUN = {
    # Its broadcasts reach tf_shm through a bridge, and this suite has the test arena only:
    # executor.spin_once() would wait for data that never comes. It runs, unmodified and
    # opted in, against a live bridge in test_tf2_ros_opt_in.py.
    "test_listener_and_broadcaster.py": "needs a bridge: run in test_tf2_ros_opt_in.py",
}

CONFTEST = '''
import os
import tempfile

import pytest
import tf_shm
from tf_shm._testing import Arena

NS = 1_000_000_000


@pytest.fixture(autouse=True)
def arena(monkeypatch):
    """A fresh arena per test; Buffer.set_transform writes into it, as the bridge would."""
    d = tempfile.mkdtemp(prefix="tf2_ros_py_suite_")
    os.chmod(d, 0o700)
    monkeypatch.setenv("TF_SHM_RUNTIME_DIR", d)
    a = Arena(d)

    def write(static):
        def set_transform(self, t, authority):
            s = t.header.stamp.sec * NS + t.header.stamp.nanosec
            tr, q = t.transform.translation, t.transform.rotation
            a.set_transform(
                t.header.frame_id, t.child_frame_id, s, (tr.x, tr.y, tr.z),
                (q.x, q.y, q.z, q.w), authority, static,
            )
        return set_transform

    monkeypatch.setattr(tf_shm.Buffer, "set_transform", write(False))
    monkeypatch.setattr(tf_shm.Buffer, "set_transform_static", write(True))
    yield a
    a.close()
'''


def ported(src: Path, dst: Path) -> None:
    dst.write_text(src.read_text().replace("tf2_ros", "tf_shm"))


def outcomes(junit: Path) -> dict[str, str]:
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname').split('.')[-1]}::{case.get('name')}"
        f = Path(case.get("file") or "").name
        kinds = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
        out[f"{f}::{name}" if f else name] = kinds[0] if kinds else "passed"
    return out


def run_suite(work: Path, junit: Path) -> tuple[dict[str, str], str]:
    """Runs the test files in ``work`` (NOT_RUN deselected): (outcome by test, output)."""
    deselect = [a for f in NOT_RUN for a in ("--deselect", f)]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *deselect],
        cwd=work,
        env={**os.environ, "PYTEST_ADDOPTS": f"--junitxml={junit} -o junit_family=xunit1"},
        timeout=300,
        check=False,
        capture_output=True,
        text=True,
    )
    got = outcomes(junit) if junit.exists() else {}
    assert got, f"the suite ran no test:\n{run.stdout}\n{run.stderr}"
    return got, run.stdout


def test_tf2_ros_py_suite_on_tf_shm(tmp_path):
    sources = os.environ.get("TF_SHM_ROS_SOURCES")
    assert sources, "TF_SHM_ROS_SOURCES (the ROS 2 Jazzy sources) is not set"
    suite = Path(sources) / SUITE
    files = sorted(p.name for p in suite.glob("test_*.py"))
    assert files, f"no tests in {suite}"
    original, ours = tmp_path / "tf2_ros", tmp_path / "tf_shm"
    original.mkdir()
    ours.mkdir()
    (ours / "conftest.py").write_text(CONFTEST)
    for f in files:
        (original / f).write_text((suite / f).read_text())
        ported(suite / f, ours / f)
    # The suite as it is, on tf2_ros: what each test does in this environment.
    want, _ = run_suite(original, tmp_path / "tf2_ros.xml")
    got, out = run_suite(ours, tmp_path / "tf_shm.xml")
    assert set(got) == set(want), (set(got) ^ set(want), out)
    assert not [t for t in got if t.split("::")[0] in NOT_RUN], got
    assert {t.split("::")[0] for t in got} == set(files) - set(NOT_RUN), got
    wrong = {}
    for test, result in got.items():
        reason = DOES_NOT_APPLY.get(test)
        if reason is None and result != want[test]:
            wrong[test] = f"{result} on tf_shm, {want[test]} on tf2_ros"
        if reason is not None and want[test] != "passed":
            wrong[test] = f"{result} on tf_shm, {want[test]} on tf2_ros; listed: {reason}"
    assert not wrong, f"{wrong}\n{out}"
    # Most of the suite passes on tf_shm (what tf2_ros fails here fails for the environment).
    assert sum(r == "passed" for r in got.values()) >= 4, got


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
