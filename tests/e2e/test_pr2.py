"""The first real run: the PR2's TF tree over DDS, served by tf_shm_bridge, read without ROS.

scripts/pr2_publisher.py (rclpy) publishes the PR2 URDF's joints on a deterministic trajectory;
tf_shm_bridge (separate process) writes them into the arena; the `tf_shm` CLI (no ROS) looks up
transforms, which must equal what ROS 2 Jazzy's tf2_ros.Buffer answers when fed the exact
transforms the publisher logged (tests/e2e/tf2_ref.py, run with this Python: the ROS env's), to
1e-9.

Run: scripts/ros-env.sh run python3 -m pytest tests/e2e   (as root). Every ROS process runs in a
loopback-only network namespace with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST: the test's own
one when pytest itself runs in the host's namespace. Binaries come from target/release (built
by a session fixture unless TF_SHM_E2E_NO_BUILD=1).
"""

import importlib.util
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from harness import ROOT, STAMP_BASE_NS, TF_SHM, tree, wait_for

TOL = 1e-9
# (target, source) looked up. The example-robot-data PR2 has no Kinect, so the head camera
# is the wide stereo pair's optical frame (through head_pan and head_tilt).
PAIRS = [
    ("map", "r_gripper_tool_frame"),
    ("base_link", "wide_stereo_optical_frame"),
    ("l_forearm_link", "r_forearm_link"),
]


def load_publisher_module():
    spec = importlib.util.spec_from_file_location(
        "pr2_publisher", ROOT / "scripts" / "pr2_publisher.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def expected_frames():
    urdf = os.environ.get("TF_SHM_PR2_URDF")
    assert urdf and Path(urdf).is_file(), (
        "TF_SHM_PR2_URDF unset or missing: run via scripts/ros-env.sh run"
    )
    joints = load_publisher_module().load_urdf(urdf)
    return {n for j in joints for n in (j.parent, j.child)} | {"map", "odom"}


def wait_complete(run, procs, timeout=40):
    """Waits until every PR2 frame plus map and odom is in the arena, dynamic ones with history."""
    want = expected_frames()

    def complete():
        run.check_alive(*procs)
        t = tree(run)
        if not t or not want <= t.keys():
            return None
        dyn = [f for f in t.values() if f["kind"] == "dynamic"]
        return t if len(dyn) == 32 and all(f["samples"] >= 2 for f in dyn) else None

    return wait_for(
        f"the complete PR2 tree ({len(want)} frames) in the arena", complete, timeout, run, 0.2
    )


def newest_common(t):
    """Oldest of the dynamic frames' newest stamps, s (0 without a tree)."""
    return (
        min((f["newest_stamp_s"] for f in t.values() if f["kind"] == "dynamic"), default=0)
        if t
        else 0
    )


def lookup(run, target, source, time_ns):
    r = run.cli("--json", "lookup", target, source, "--time", "%.6f" % (time_ns / 1e9))
    assert r.returncode == 0, (
        f"tf_shm lookup {target} {source} at {time_ns} ns: {r.stdout}{r.stderr}"
    )
    return json.loads(r.stdout)


def reference(log, queries):
    scenario = json.dumps({"cache_time_s": 10.0, "log": str(log), "queries": queries})
    r = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("tf2_ref.py"))],
        input=scenario,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, f"tf2 reference failed: {r.stderr}"
    return json.loads(r.stdout)


def assert_same(got, want, what):
    assert "e" not in want, f"{what}: tf2 refused: {want['e']}"
    assert got["stamp_ns"] == want["s"], f"{what}: stamp {got['stamp_ns']} != tf2's {want['s']}"
    dt = max(abs(a - b) for a, b in zip(got["translation_m"], want["t"]))
    dq = min(max(abs(a - s * b) for a, b in zip(got["rotation_xyzw"], want["q"])) for s in (1, -1))
    assert dt <= TOL and dq <= TOL, f"{what}: tf_shm {got} vs tf2 {want} (dt {dt:.3g}, dq {dq:.3g})"
    return max(dt, dq)


# ---------------------------------------------------------------------------------------------
# Tests


def test_pr2_lookups_match_tf2(run):
    bridge = run.bridge()
    wait_for(
        "the bridge's arena", lambda: run.check_alive(bridge) or tree(run) is not None, 20, run
    )
    pub = run.publisher()
    t0 = newest_common(wait_complete(run, [bridge, pub]))

    # Let it run: at least 2 s of stamps after the tree was complete.
    def two_seconds_on():
        t = newest_common(tree(run))
        return t if t >= t0 + 2.0 else None

    t_now = wait_for("2 s of transforms after the tree was complete", two_seconds_on, 30, run)
    run.check_alive(bridge, pub)

    # Past times between samples: whole microseconds, never on the 10 ms grid.
    lo, hi = int((t0 + 0.2) * 1e6), int((t_now - 0.2) * 1e6)
    times_us = [lo + (hi - lo) * i // 5 for i in range(6)]
    times_ns = [(us - us % 10_000 + 3_217 + 1_111 * i) * 1000 for i, us in enumerate(times_us)]
    got, queries = [], []
    for target, source in PAIRS:
        for t in times_ns:
            g = lookup(run, target, source, t)
            assert g["stamp_ns"] == t
            got.append(g)
            queries.append([target, source, t])
        g = lookup(run, target, source, 0)
        assert STAMP_BASE_NS < g["stamp_ns"] and g["stamp_ns"] % 10_000_000 == 0, g
        got.append(g)
        queries.append([target, source, g["stamp_ns"]])  # time 0: compared at its returned stamp

    pub.send_signal(signal.SIGINT)
    assert pub.wait(timeout=10) == 0, run.logs()
    worst = 0.0
    for g, q, want in zip(got, queries, reference(run.dir / "pub.jsonl", queries)):
        worst = max(worst, assert_same(g, want, f"T_{q[0]}_{q[1]} at {q[2]} ns"))
    print(
        f"\n{len(got)} lookups over {len(PAIRS)} pairs equal tf2's; largest difference {worst:.2e}"
    )


def test_second_bridge_refused(run):
    first = run.bridge()
    wait_for(
        "the first bridge's arena", lambda: run.check_alive(first) or tree(run) is not None, 20, run
    )
    second = run.bridge("second")
    code = second.wait(timeout=30)
    text = second.log.read_text()
    assert code != 0, f"second bridge exit status {code}\n{text}"
    assert str(first.pid) in text, f"refusal does not name the owner pid {first.pid}:\n{text}"
    run.check_alive(first)


def test_consumer_survives_bridge_restart(run):
    bridge = run.bridge()
    wait_for(
        "the bridge's arena", lambda: run.check_alive(bridge) or tree(run) is not None, 20, run
    )
    pub = run.publisher()
    wait_complete(run, [bridge, pub])
    echo = run.start(
        "echo",
        [TF_SHM, "--json", "echo", "map", "r_gripper_tool_frame", "--rate", "20"],
        stdout=subprocess.PIPE,
        text=True,
    )
    lines = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(json.loads(l)) for l in echo.stdout], daemon=True
    ).start()

    def newest_ok(after, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                o = lines.get(timeout=0.5)
            except queue.Empty:
                run.check_alive(echo)
                continue
            if o["ok"] and o["stamp_ns"] > after:
                return o["stamp_ns"]
        pytest.fail(
            f"echo printed no transform newer than {after} ns within {timeout} s ({what})\n{run.logs()}"
        )

    before = newest_ok(0, 15, "before the kill")
    bridge.kill()  # SIGKILL: no clean shutdown, the socket file stays
    bridge.wait()
    time.sleep(0.5)
    while not lines.empty():
        o = lines.get()
        before = max(before, o.get("stamp_ns", 0))
    restarted = run.bridge("bridge2")
    after = newest_ok(before, 40, "after the restart")
    run.check_alive(echo, restarted, pub)
    print(
        f"\necho re-attached by itself: {before / 1e9:.2f} s before the kill, {after / 1e9:.2f} s after"
    )


def test_latency_and_ingest(built, netns):
    """Measures (asserts only that the tools work): ingest without DDS, publish -> visible."""
    r = subprocess.run(
        netns + ["bash", str(ROOT / "scripts" / "latency.sh"), "--rate", "500", "--count", "1500"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    ingest, lat = (json.loads(l) for l in r.stdout.splitlines()[-2:])
    print(
        f"\ningest (ArenaWriter, PR2-shaped, no DDS): {ingest['per_s_wall']:.0f} transforms/s wall, "
        f"{ingest['ns_per_transform_cpu']:.0f} ns CPU each"
    )
    print(
        f"publish -> visible ({lat['samples']} at 500 Hz): p50 {lat['p50_us']} us, p99 {lat['p99_us']} us, "
        f"p99.9 {lat['p999_us']} us, max {lat['max_us']} us"
    )
    assert lat["samples"] == 1500 and ingest["per_s_wall"] > 0


def demo_env():
    rt = Path(tempfile.mkdtemp(prefix="tfdemo-")) / "rt"
    rt.mkdir(mode=0o700)
    env = dict(
        os.environ,
        TF_SHM_RUNTIME_DIR=str(rt),
        ROS_DOMAIN_ID=str(random.randint(10, 100)),
        NO_COLOR="1",
    )
    env.pop("XDG_RUNTIME_DIR", None)
    return env


def test_demo_prints_transforms(built):
    r = subprocess.run(
        [str(ROOT / "scripts" / "demo.sh"), "--duration", "8"],
        capture_output=True,
        text=True,
        timeout=300,
        env=demo_env(),
        check=False,
    )
    assert r.returncode == 0, f"demo.sh exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert "r_gripper_tool_frame" in r.stdout and "Translation" in r.stdout, r.stdout[-3000:]


class Demo:
    """scripts/demo.sh running in a session of its own (its process group is the terminal's
    foreground group a Ctrl-C would signal)."""

    def __init__(self, env):
        self.dir = Path(tempfile.mkdtemp(prefix="tfdemo-out-"))
        self.err_path = self.dir / "stderr"
        # The script gets its own copies of the descriptors: ours are closed once it started.
        with open(self.dir / "stdout", "w") as out, open(self.err_path, "w") as err:
            self.p = subprocess.Popen(
                [str(ROOT / "scripts" / "demo.sh")],
                env=env,
                start_new_session=True,
                stdout=out,
                stderr=err,
            )

    def err(self):
        return self.err_path.read_text()

    def paste_line(self, timeout=240):
        """The demo's 'in another terminal' line, once it serves the PR2."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.err().splitlines():
                if line.startswith("demo: in another terminal: "):
                    return line
            assert self.p.poll() is None, f"demo.sh exited {self.p.returncode}\n{self.err()}"
            time.sleep(0.2)
        pytest.fail(f"demo.sh did not get going\n{self.err()}")

    def session(self):
        """Pids of processes still in the demo's session."""
        left = []
        for d in Path("/proc").iterdir():
            try:
                stat = (d / "stat").read_text()
            except (OSError, ValueError):
                continue
            if d.name.isdigit() and int(stat.rsplit(")", 1)[1].split()[3]) == self.p.pid:
                left.append(int(d.name))
        return left

    def stop(self, signal_group):
        if signal_group:
            os.killpg(self.p.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group
        else:
            os.kill(self.p.pid, signal.SIGINT)  # `kill -INT` of the script alone
        try:
            code = self.p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            pytest.fail(f"demo.sh still running 15 s after SIGINT\n{self.err()}")
        assert code == 0, f"demo.sh exit {code}\n{self.err()}"
        time.sleep(0.5)
        assert self.session() == [], f"processes left behind: {self.session()}\n{self.err()}"
        assert "demo: stopped" in self.err()


def readme_tree_matches(env):
    """README.md's `tf_shm tree` example is what the demo prints in 100 columns: its header, first
    frames (kinds and rates are exact: the publisher's stamps step by 10 ms) and last line."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```text\n$ tf_shm tree\n", 1)[1].split("\n$ ", 1)[0].splitlines()
    shown = [l for l in block if not l.startswith("…")]
    r = subprocess.run(
        [TF_SHM, "tree"],
        env=dict(env, COLUMNS="100"),
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(l) for l in lines) <= 100, r.stdout
    assert lines[: len(shown) - 1] == shown[:-1] and lines[-1] == shown[-1], (
        "README's tree example differs from the demo's:\n"
        + "\n".join(lines[: len(shown)] + lines[-1:])
    )
    total = re.search(r"\((\d+) frames in all\)", "\n".join(block))
    assert total and int(total.group(1)) == len(lines) - 2, r.stdout


def test_demo_serves_where_tf_shm_looks_and_stops_on_sigint(built):
    """A plain `tf_shm` (same environment) reads the demo's arena; a second demo, finding the
    arena taken, serves from a private directory and prints the export line to paste; SIGINT to
    the whole group (Ctrl-C) or to the script alone ends every process of either."""
    env = demo_env()
    first = Demo(env)
    try:
        line = first.paste_line()
        assert "export" not in line, line
        cmd = line.split("demo: in another terminal: ", 1)[1].split("   ", 1)[0]
        assert cmd == f"{TF_SHM} tree", line
        r = subprocess.run(
            [TF_SHM, "--json", "tree"],
            env=env,
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        assert r.returncode == 0, r.stderr
        assert len(json.loads(r.stdout)["frames"]) > 50
        readme_tree_matches(env)
        second = Demo(env)
        try:
            line = second.paste_line()
            m = re.search(r"export TF_SHM_RUNTIME_DIR=(\S+); ", line)
            assert m, line
            private = dict(env, TF_SHM_RUNTIME_DIR=m.group(1))
            r = subprocess.run(
                [TF_SHM, "--json", "tree"],
                env=private,
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            )
            assert r.returncode == 0, r.stderr
            second.stop(signal_group=True)
        finally:
            if second.p.poll() is None:
                os.killpg(second.p.pid, signal.SIGKILL)
        first.stop(signal_group=False)
        r = subprocess.run(
            [TF_SHM, "tree"], env=env, capture_output=True, text=True, timeout=20, check=False
        )
        assert r.returncode == 3 and "no bridge" in r.stderr, r.stderr
    finally:
        if first.p.poll() is None:
            os.killpg(first.p.pid, signal.SIGKILL)
