"""The bridge under faults and load: nothing lost below the QoS depth, consumers never dark on a
restart, a flood of frame names bounded in the log.

Real processes in a loopback-only network namespace (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST),
with both cores kept busy by busy loops at normal priority where the issue asks for it.
Publishers: tests/ros/tf_faults_publisher.py; consumers: the `tf_shm` CLI and
crates/tf_shm/examples/restart_probe.rs. Fixtures (build, netns, one run's world) are the e2e
tests' (tests/conftest.py, tests/harness.py); TF_SHM_TEST_BRIDGE names another bridge binary for
before/after measurements.

Run: scripts/ros-env.sh run python3 -m pytest tests/ros/test_bridge_faults.py   (as root)
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import BIN, ROOT, tree, wait_for

PUB = str(Path(__file__).with_name("tf_faults_publisher.py"))
PROBE = str(BIN / "examples" / "restart_probe")


@pytest.fixture(scope="module")
def probe_built(built):
    if os.environ.get("TF_SHM_E2E_NO_BUILD") != "1":
        subprocess.run(
            ["cargo", "build", "-q", "--release", "-p", "tf_shm", "--example", "restart_probe"],
            cwd=ROOT,
            check=True,
            timeout=1200,
        )
    assert os.access(PROBE, os.X_OK), f"{PROBE} not built"


@pytest.fixture
def busy_cores():
    """Both cores busy with one busy loop per core, at normal priority, for the whole test."""
    loops = [
        subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 2)
    ]
    yield
    for p in loops:
        p.kill()
        p.wait()


def publisher(run, mode, n, name=None):
    p = run.start(
        name or f"pub_{mode}",
        [sys.executable, PUB, mode, str(n)],
        stdout=subprocess.PIPE,
        text=True,
    )
    return p


def expect_line(run, p, want, timeout=30):
    """Waits for `want` on p's stdout (the publisher's own lines)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = p.stdout.readline()
        if line.strip() == want:
            return
        if not line and p.poll() is not None:
            break
    pytest.fail(f"{p.name} did not say {want!r}\n{run.logs()}")


def frames_named(run, prefix):
    t = tree(run)
    return {n for n in t if n.startswith(prefix)} if t else set()


def stored(run, prefix, want, timeout):
    """Polls the tree until the frames named `prefix`* are `want` or `timeout` s pass; returns them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and frames_named(run, prefix) != want:
        time.sleep(0.2)
    return frames_named(run, prefix)


def restarted(run, k, *others):
    """Starts bridge `k` of a restart test and waits until it declared its arena ready (doctor's
    READY), checking that it and `others` stay alive meanwhile; returns it."""
    bridge = run.bridge(f"bridge{k}")
    wait_for(
        f"restart {k}: arena ready",
        lambda: (
            run.check_alive(bridge, *others) or doctor(run).get("READY", {}).get("status") == "ok"
        ),
        30,
        run,
        0.1,
    )
    return bridge


def doctor(run):
    r = run.cli("--json", "doctor")
    return {c["code"]: c for c in json.loads(r.stdout)["checks"]}


def test_forty_latched_static_publishers_before_the_bridge_all_stored(run, busy_cores):
    pub = publisher(run, "statics", 40)
    expect_line(run, pub, "up", 60)
    bridge = run.bridge()
    want = {f"static_{i}" for i in range(40)}
    wait_for(
        "the bridge's arena", lambda: run.check_alive(bridge) or tree(run) is not None, 30, run
    )
    got = stored(run, "static_", want, 20)
    assert got == want, (
        f"{len(got)} of 40 static frames stored; missing {sorted(want - got)[:8]}\n{run.logs()}"
    )
    assert doctor(run)["INTAKE"]["status"] == "ok"


def test_a_hundred_tf_messages_back_to_back_all_stored(run, busy_cores):
    bridge = run.bridge()
    wait_for(
        "the bridge's arena", lambda: run.check_alive(bridge) or tree(run) is not None, 30, run
    )
    pub = publisher(run, "burst", 100)
    expect_line(run, pub, "sent 100", 60)
    want = {f"burst_{i}" for i in range(100)}
    got = stored(run, "burst_", want, 15)
    assert got == want, f"{len(got)} of 100 burst messages stored\n{run.logs()}"
    assert doctor(run)["INTAKE"]["status"] == "ok"


def test_messages_the_middleware_drops_are_counted(run):
    """A bridge stopped (SIGSTOP) while 3000 messages are published back to back cannot get them
    all afterwards (more than the publisher's history and Fast DDS's shared-memory transport
    hold for it: the bridge takes each message as it is delivered, so with 300 none is lost);
    every one missing is counted as lost, none silently."""
    n = 3000
    bridge = run.bridge()
    wait_for(
        "the bridge's arena", lambda: run.check_alive(bridge) or tree(run) is not None, 30, run
    )
    pub = run.start(
        "pub_held",
        [sys.executable, PUB, "held", str(n)],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
    )
    expect_line(run, pub, "lead sent", 60)
    # The publisher's first message starts its sequence count in the bridge.
    assert stored(run, "held_lead", {"held_lead"}, 15) == {"held_lead"}, run.logs()
    os.kill(bridge.pid, signal.SIGSTOP)
    try:
        pub.stdin.write("go\n")
        pub.stdin.flush()
        expect_line(run, pub, f"sent {n}", 60)
        time.sleep(0.5)
    finally:
        os.kill(bridge.pid, signal.SIGCONT)
    want = {f"held_{i}" for i in range(n)}
    deadline = time.monotonic() + 20
    while True:
        got = frames_named(run, "held_") - {"held_lead"}
        m = re.match(r"(\d+) messages lost", doctor(run)["INTAKE"]["verdict"])
        lost = int(m.group(1)) if m else 0
        if len(got) + lost >= n or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    print(f"\nmiddleware drop: {len(got)} of {n} stored, {lost} counted lost")
    assert got <= want
    assert lost > 0, (
        f"nothing counted although {n - len(got)} of {n} messages are missing\n{run.logs()}"
    )
    assert len(got) + lost == n, (
        f"{len(got)} stored + {lost} counted lost != {n} published\n{run.logs()}"
    )
    check = doctor(run)["INTAKE"]
    assert check["status"] == "fail" and check["verdict"].startswith(f"{lost} messages lost"), check
    # The bridge said so at warn, with the middleware's share (the warning is rate-limited to
    # one per 10 s, with running totals: the final count may come in the next one).
    said = rf"{lost} messages lost so far .*{lost} not delivered by the middleware"
    deadline = time.monotonic() + 15
    while not re.search(said, text := Path(bridge.log).read_text()):
        assert time.monotonic() < deadline, text[-3000:]
        time.sleep(0.3)


def test_twenty_sigkill_restarts_no_lookup_fails(run, probe_built):
    """20 SIGKILL restarts under a live publisher, 4 consumers: no lookup fails, no answer is
    wrong, and each consumer answers with the new bridge's data within 1 s of the new bridge
    receiving it (measured by a probe that opens the new arena fresh after each kill)."""
    restarts = 20
    bridge = run.bridge("bridge0")
    wait_for(
        "the bridge's arena", lambda: run.check_alive(bridge) or tree(run) is not None, 30, run
    )
    pub = publisher(run, "live", 50)
    expect_line(run, pub, "up", 60)
    wait_for("map -> sensor", lambda: run.cli("lookup", "map", "sensor").returncode == 0, 30, run)
    probes = [
        run.start(f"probe{i}", [PROBE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for i in range(4)
    ]
    time.sleep(1.0)
    receipts, kills = [], []
    for k in range(1, restarts + 1):
        bridge.send_signal(signal.SIGKILL)
        bridge.wait()
        # Stamps newer than this were published after the old bridge died: only the new one
        # can deliver them.
        killed = time.time_ns()
        kills.append(killed)
        for p in probes:
            p.stdin.write(f"kill {killed}\n")
            p.stdin.flush()
        receipt = run.start(
            f"receipt{k}",
            [PROBE, "--receipt-after", str(killed)],
            stdout=subprocess.PIPE,
            text=True,
        )
        # Wait until the new arena is ready and every probe had time to follow it.
        bridge = restarted(run, k, pub, *probes)
        time.sleep(1.2)
        out, _ = receipt.communicate(timeout=20)
        receipts.append(json.loads(out.strip().splitlines()[-1])["receipt_unix_ns"])
    results = []
    for p in probes:
        out, _ = p.communicate(timeout=20)
        results.append(json.loads(out.strip().splitlines()[-1]))
    since_kill = sorted((rc - k) / 1e6 for rc, k in zip(receipts, kills))
    summary = [
        (
            "new bridge had /tf data after the kill: "
            f"p50 {since_kill[len(since_kill) // 2]:.0f} ms max {since_kill[-1]:.0f} ms"
        )
    ]
    for i, r in enumerate(results):
        stale = sorted(s["stale_ms"] for s in r["swaps"])
        wait = sorted(s["swap_after_first_data_ms"] for s in r["swaps"])
        lag = sorted((f - rc) / 1e6 for f, rc in zip(r["fresh_unix_ns"], receipts) if f is not None)
        summary.append(
            f"probe{i}: {r['lookups']} lookups, {r['errors']} errors, {r['wrong']} wrong, "
            f"{r['generation']} swaps; fresh data after the new bridge had it "
            f"p50 {lag[len(lag) // 2]:.0f} ms max {lag[-1]:.0f} ms; "
            f"without fresh data p50 {stale[len(stale) // 2]:.0f} ms max {stale[-1]:.0f} ms; "
            f"swap after the new arena's first data p50 {wait[len(wait) // 2]:.0f} ms "
            f"max {wait[-1]:.0f} ms"
            if lag
            else f"probe{i}: no fresh data: {r}"
        )
    print("\n".join(summary))
    for i, r in enumerate(results):
        assert r["errors"] == 0, (
            f"probe{i}: {r['errors']} failed lookups, first: {r['first_error']}\n{summary}"
        )
        assert r["wrong"] == 0, f"probe{i}: {r['wrong']} wrong answers"
        assert r["generation"] == restarts, (
            f"probe{i} followed {r['generation']} of {restarts} restarts"
        )
        assert len(r["fresh_unix_ns"]) == restarts
        for k, (fresh, rc) in enumerate(zip(r["fresh_unix_ns"], receipts), 1):
            assert fresh is not None, f"probe{i} never answered with restart {k}'s data\n{summary}"
            assert fresh - rc < 10**9, (
                f"probe{i}, restart {k}: fresh data {(fresh - rc) / 1e6:.0f} ms after the new bridge had it\n{summary}"
            )
        for s in r["swaps"]:
            # Bounded by the bridge's ready grace (6 s) plus the consumer's cover wait.
            assert s["swap_after_create_ms"] < 8000, f"probe{i} swapped late: {s}"


# Polls every static frame every 5 ms through a tf_shm.Buffer until told to stop on stdin;
# prints each stretch during which a frame it had answered was missing.
STATIC_WATCH = r"""
import json, sys, threading, time
import tf_shm

frames = [f"static_{i}" for i in range(int(sys.argv[1]))]
buffer = tf_shm.Buffer(open_timeout=10.0)
deadline = time.monotonic() + 60
while not all(buffer.can_transform("base_link", f, 0) for f in frames):
    assert time.monotonic() < deadline, "the static frames never all answered"
    time.sleep(0.01)
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
print("watching", flush=True)
outages, since, polls = [], None, 0
while not stop.is_set():
    missing = [f for f in frames if not buffer.can_transform("base_link", f, 0)]
    polls += 1
    now = time.monotonic()
    if missing and since is None:
        since, first = now, missing
    elif not missing and since is not None:
        outages.append({"s": round(now - since, 3), "missing": first})
        since = None
    time.sleep(0.005)
if since is not None:
    outages.append({"s": round(time.monotonic() - since, 3), "missing": first, "open": True})
print(json.dumps({"polls": polls, "outages": outages}), flush=True)
"""


def test_static_frames_stay_across_restarts_next_to_running_broadcasters(run):
    """Six static broadcasters, each a process of its own, and a live /tf publisher run while
    the bridge is SIGKILLed and started again at once, six times: a consumer polling every
    static frame every 5 ms never misses one. (A bridge that declared its arena ready before
    discovery had shown every broadcaster switched its consumers to an arena without their
    frames: 4 of 12 such restarts, for up to 1 s.)"""
    n, restarts = 6, 6
    bridge = run.bridge("bridge0")
    wait_for(
        "the bridge's arena", lambda: run.check_alive(bridge) or tree(run) is not None, 30, run
    )
    pubs = [publisher(run, "static_one", i, name=f"static{i}") for i in range(n)]
    for p in pubs:
        expect_line(run, p, "up", 60)
    live = publisher(run, "live", 50)
    expect_line(run, live, "up", 60)
    watcher = run.start(
        "watcher",
        [sys.executable, "-c", STATIC_WATCH, str(n)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    expect_line(run, watcher, "watching", 90)
    for k in range(1, restarts + 1):
        bridge.send_signal(signal.SIGKILL)
        bridge.wait()
        bridge = restarted(run, k, live, *pubs)
        # Consumers switch to the new arena alone 500 ms after it is ready.
        time.sleep(1.5)
    watcher.stdin.write("stop\n")
    watcher.stdin.flush()
    out, _ = watcher.communicate(timeout=30)
    r = json.loads(out.strip().splitlines()[-1])
    assert r["polls"] > 100, r
    assert r["outages"] == [], f"static frames missing across restarts: {r['outages']}"


def test_a_flood_of_frame_names_is_bounded_in_the_log(run):
    """100 000 new frame names against a 4096-frame table: the bridge logs a bounded number of
    lines, doctor fails CAPACITY, and frames that existed before keep answering."""
    bridge = run.bridge()
    wait_for(
        "the bridge's arena", lambda: run.check_alive(bridge) or tree(run) is not None, 30, run
    )
    pub = publisher(run, "live", 50)
    expect_line(run, pub, "up", 60)
    wait_for("map -> sensor", lambda: run.cli("lookup", "map", "sensor").returncode == 0, 30, run)
    flood = run.start("flood", [sys.executable, "-c", FLOOD], stdout=subprocess.PIPE, text=True)
    expect_line(run, flood, "flooded", 120)
    time.sleep(1.0)
    run.check_alive(bridge, pub)
    # The held-back lines are summarised once the 10 s period since the first of them is over.
    summary = re.compile(r"\d+ more refused or capacity-limited transforms")
    wait_for(
        "the summary of held-back refusal lines",
        lambda: any(summary.search(line) for line in bridge.log.read_text().splitlines()),
        20,
        run,
        0.5,
    )
    lines = bridge.log.read_text().splitlines()
    print(f"100 000-name flood: {len(lines)} bridge log lines")
    assert len(lines) < 200, f"{len(lines)} log lines for a 100 000-name flood:\n" + "\n".join(
        lines[-20:]
    )
    checks = doctor(run)
    assert checks["CAPACITY"]["status"] == "fail", checks["CAPACITY"]
    assert "frame table is full" in checks["CAPACITY"]["verdict"]
    r = run.cli("--json", "lookup", "map", "sensor")
    assert r.returncode == 0, r.stdout + r.stderr
    fresh = json.loads(r.stdout)["stamp_ns"]
    assert time.time_ns() - fresh < 2 * 10**9, "existing frames keep receiving data after the flood"


# 100 000 distinct child frames in messages of 1000 transforms each, on /tf.
FLOOD = r"""
import time, rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage
from geometry_msgs.msg import TransformStamped
rclpy.init()
node = rclpy.create_node("flood_pub")
pub = node.create_publisher(TFMessage, "/tf", QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
while pub.get_subscription_count() < 1:
    time.sleep(0.05)
time.sleep(1.0)
for b in range(100):
    msg = TFMessage()
    now = time.time_ns()
    for i in range(1000):
        t = TransformStamped()
        t.header.frame_id = "map"
        t.child_frame_id = f"flood_{b}_{i}"
        t.header.stamp.sec, t.header.stamp.nanosec = divmod(now, 10**9)
        t.transform.rotation.w = 1.0
        msg.transforms.append(t)
    pub.publish(msg)
    time.sleep(0.02)
print("flooded", flush=True)
time.sleep(3600)
"""


def test_a_static_publisher_that_delivers_nothing_is_said_and_warned_by_doctor(run):
    """A /tf_static publisher in the graph whose transforms never reach the bridge (here a
    volatile one: it cannot match the bridge's transient-local subscription) is named in a warn
    line with its durability and that its QoS cannot match, and counted for doctor's STATICS
    check; a latched publisher beside it delivers and is not named."""
    pub = publisher(run, "volatile_static", 1)
    expect_line(run, pub, "up", 60)
    bridge = run.bridge()
    stored(run, "latched_static", {"latched_static"}, 30)
    assert frames_named(run, "latched_static") == {"latched_static"}, run.logs()
    wait_for(
        "the bridge's warn line on the publisher that delivered nothing",
        lambda: run.check_alive(bridge) or "delivered nothing" in bridge.log.read_text(),
        30,
        run,
    )
    line = next(ln for ln in bridge.log.read_text().splitlines() if "delivered nothing" in ln)
    assert "WARN" in line and "1 /tf_static publisher(s)" in line, line
    assert (
        "/volatile_static_pub_0 (durability Volatile: its QoS cannot match this subscription)"
        in line
    ), line
    assert "latched_static_pub" not in line, line
    check = doctor(run)["STATICS"]
    assert check["status"] == "warn", check
    assert check["verdict"].startswith("1 /tf_static publisher(s) in the ROS graph"), check
    assert not frames_named(run, "volatile_static"), run.logs()
    # The publisher leaves the graph: the count goes back to 0.
    pub.kill()
    pub.wait()
    wait_for(
        "STATICS ok once the publisher left the graph",
        lambda: doctor(run)["STATICS"]["status"] == "ok",
        30,
        run,
    )
