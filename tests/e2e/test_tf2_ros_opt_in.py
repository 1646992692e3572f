"""Unmodified tf2_ros Python nodes on tf_shm with TF_SHM_TF2_ROS=1 (the wheel's .pth hook,
crates/tf_shm_py/python/_tf_shm_tf2_ros.py).

The nodes are geometry2's own examples (tests/third_party/examples_tf2_py, vendored unmodified),
started as their console scripts are. The tf_shm wheel scripts/test.sh builds
(target/wheels) is pip-installed into a venv layered over the ROS environment's (its
site-packages added by a .pth), because site.py honours .pth files only in site directories, not
on PYTHONPATH: that venv is "the environment the nodes run in". target/py-site is taken off
PYTHONPATH for these processes so the installed copy is the one that runs.

Checked: every import form of tf2_ros gives tf_shm's Buffer and TransformListener and leaves the
rest tf2_ros's own; without the variable tf2_ros is untouched (the hook not imported, and
every tf2_ros module the same file, loader and names, each name the same module and qualified
name, as in a Python without tf_shm; its sources' hashes unchanged); the hooked nodes answer as tf2_ros's own listener
does (tf2 at the same stamps, to 1e-9) and hold no /tf or /tf_static subscription (rclpy's graph
API); a node started before the bridge; a tf_shm that cannot load (a broken native module) gives
one warning and tf2_ros's own listener; the launch file under the real `ros2 launch`. Cost:
~100 s on 2 shared cores (DDS discovery, the examples' 1 Hz timers, ~1 s per fresh interpreter).
"""

import hashlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from harness import ROOT, wait_for

VENDORED = ROOT / "tests" / "third_party"
HOOK_WARNING = "TF_SHM_TF2_ROS=1 but the tf_shm package cannot be loaded"


def _make_venv(path, wheel):
    """A venv over this interpreter's environment (the ROS venv) with the tf_shm wheel."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    site = Path(
        subprocess.run(
            [
                str(path / "bin" / "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    purelib = sysconfig.get_paths()["purelib"]
    (site / "_ros_environment.pth").write_text(f"import site; site.addsitedir({purelib!r})\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(path / "bin" / "python"), "install", "-q"]
        + ["--no-deps", "--no-index", str(wheel)],
        env=_env(os.environ, None),  # target/py-site would read as "already installed"
        check=True,
    )
    return path / "bin" / "python", site


@pytest.fixture(scope="module")
def venvs():
    """{"good": python, "broken": python (tf_shm's native module overwritten), "site": dir,
    "plain_tf2_ros": the description of tf2_ros in "good" without the variable}."""
    wheels = sorted((ROOT / "target" / "wheels").glob("tf_shm-*.whl"))
    assert wheels, (
        "no tf_shm wheel in target/wheels: run scripts/py-wheel.sh (as scripts/test.sh does)"
    )
    top = Path(tempfile.mkdtemp(prefix="tf2ros-optin-"))
    good, site = _make_venv(top / "good", wheels[-1])
    broken, broken_site = _make_venv(top / "broken", wheels[-1])
    for so in (broken_site / "tf_shm").glob("_native*.so"):
        so.write_bytes(b"not a shared object\n")
    plain = subprocess.run(
        [str(good), "-c", DESCRIBE + "import tf2_ros\nprint(json.dumps(describe()))"],
        env=_env(os.environ, None),
        capture_output=True,
        text=True,
        check=True,
    )
    yield {
        "good": str(good),
        "broken": str(broken),
        "site": site,
        "plain_tf2_ros": json.loads(plain.stdout),  # what describe() says without the hook
    }
    shutil.rmtree(top, ignore_errors=True)


def _env(base, hook):
    env = dict(base)
    py_site = str(ROOT / "target" / "py-site")
    parts = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != py_site]
    env["PYTHONPATH"] = os.pathsep.join([str(VENDORED), *parts])
    env.pop("TF_SHM_TF2_ROS", None)
    if hook is not None:
        env["TF_SHM_TF2_ROS"] = hook
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _python(python, code, hook, base=None):
    r = subprocess.run(
        [python, "-c", code],
        env=_env(base or os.environ, hook),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, f"{code}\n{r.stdout}\n{r.stderr}"
    return r


# -- import forms, untouched tf2_ros, a tf_shm that cannot load: no ROS graph needed ---------

DESCRIBE = """
import json, sys, types
def describe():
    out = {}
    for name, mod in sorted(sys.modules.items()):
        if name.split(".")[0] != "tf2_ros" or not isinstance(mod, types.ModuleType):
            continue
        out[name] = {"file": mod.__file__, "loader": type(mod.__spec__.loader).__name__,
                     "names": {k: f"{getattr(v, '__module__', '')}:{getattr(v, '__qualname__', type(v).__name__)}"
                               for k, v in vars(mod).items() if not k.startswith("__")}}
    return out
"""

FORMS = {
    "from tf2_ros import Buffer, TransformListener": ("Buffer", "TransformListener"),
    "from tf2_ros.buffer import Buffer": ("Buffer",),
    "from tf2_ros.transform_listener import TransformListener": ("TransformListener",),
    "import tf2_ros as tf2; Buffer, TransformListener = tf2.Buffer, tf2.TransformListener": (
        "Buffer",
        "TransformListener",
    ),
    "import tf2_ros.buffer, tf2_ros.transform_listener as tl; "
    "Buffer, TransformListener = tf2_ros.buffer.Buffer, tl.TransformListener": (
        "Buffer",
        "TransformListener",
    ),
    # tf_shm first: tf_shm may import tf2_ros itself, which must not break either.
    "import tf_shm; from tf2_ros import Buffer, TransformListener": ("Buffer", "TransformListener"),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_every_import_form_gives_tf_shm_classes(venvs, form):
    code = (
        DESCRIBE
        + f"NAMES = {FORMS[form]!r}\n"
        + form
        + """
import tf_shm, tf2_ros
got = {n: globals()[n] is getattr(tf_shm, n) for n in NAMES}
print(json.dumps({"got": got, "tf2_ros": describe(),
                  "static": hasattr(tf2_ros, "StaticTransformListener")}))
"""
    )
    hooked = json.loads(_python(venvs["good"], code, "1").stdout)
    assert hooked["got"] == {n: True for n in FORMS[form]}, hooked["got"]
    plain = venvs["plain_tf2_ros"]
    # Every other name of every tf2_ros module is tf2_ros's own; only these are tf_shm's.
    for mod, desc in plain.items():
        h = hooked["tf2_ros"][mod]
        assert h["file"] == desc["file"]
        assert set(h["names"]) == set(desc["names"]), mod
        changed = {k for k in desc["names"] if h["names"][k] != desc["names"][k]}
        assert changed <= {"Buffer", "TransformListener"}, (mod, changed)
        for patched in ("Buffer", "TransformListener"):
            if patched in desc["names"]:
                assert h["names"][patched].startswith("tf_shm."), (mod, h["names"][patched])
        for kept in ("TransformBroadcaster", "StaticTransformBroadcaster", "BufferInterface"):
            if kept in desc["names"]:
                assert h["names"][kept] == desc["names"][kept]
    assert hooked["tf2_ros"]["tf2_ros"]["names"]["TransformRegistration"].startswith("tf2_ros.")
    assert (
        hooked["tf2_ros"]["tf2_ros"]["names"]["LookupException"]
        == (plain["tf2_ros"]["names"]["LookupException"])
    )
    # Jazzy's Python tf2_ros has no StaticTransformListener; the hook adds none.
    assert hooked["static"] is False


def _tf2_ros_sources():
    import tf2_ros

    d = Path(tf2_ros.__file__).parent
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.glob("*.py"))}


@pytest.mark.parametrize("value", [None, "0", ""])
def test_without_the_variable_tf2_ros_is_untouched(venvs, value):
    before = _tf2_ros_sources()
    code = (
        DESCRIBE
        + """
import tf2_ros, tf2_ros.buffer, tf2_ros.transform_listener
print(json.dumps({"hook": "_tf_shm_tf2_ros" in sys.modules, "tf_shm": "tf_shm" in sys.modules,
                  "finders": [type(f).__module__ for f in sys.meta_path], "tf2_ros": describe()}))
"""
    )
    with_wheel = json.loads(_python(venvs["good"], code, value).stdout)
    # The ROS environment's own interpreter: no tf_shm installed (PYTHONPATH without py-site).
    without = json.loads(_python(sys.executable, code, None).stdout)
    assert with_wheel["hook"] is False and with_wheel["tf_shm"] is False, with_wheel
    assert "_tf_shm_tf2_ros" not in with_wheel["finders"], with_wheel["finders"]
    assert with_wheel["tf2_ros"] == without["tf2_ros"]
    assert with_wheel["tf2_ros"]["tf2_ros"]["names"]["Buffer"] == "tf2_ros.buffer:Buffer"
    # The hook's runs (this and the other tests) changed nothing on disk.
    assert _tf2_ros_sources() == before


def test_tf_shm_run_launcher_without_pth(venvs, tmp_path):
    """python3 -m tf_shm.run, for installs whose .pth is not honoured (PYTHONPATH): here the
    ROS interpreter with target/py-site on PYTHONPATH, as scripts/test.sh sets it."""
    script = tmp_path / "node.py"
    script.write_text(
        "import sys\nfrom tf2_ros.buffer import Buffer\nimport tf_shm\n"
        "print(Buffer is tf_shm.Buffer, sys.argv[1:], __name__)\n"
    )
    env = _env(os.environ, None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "target" / "py-site"), env["PYTHONPATH"]])
    r = subprocess.run(
        [sys.executable, "-m", "tf_shm.run", str(script), "a", "--b"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (r.returncode, r.stdout) == (0, "True ['a', '--b'] __main__\n"), r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "tf_shm.run"], env=env, capture_output=True, text=True, check=False
    )
    assert r.returncode == 2 and "usage: python3 -m tf_shm.run" in r.stderr


def test_tf_shm_that_cannot_load_warns_once_and_keeps_tf2_ros(venvs):
    r = _python(
        venvs["broken"],
        "import tf2_ros\nfrom tf2_ros.buffer import Buffer\nimport tf2_ros.transform_listener as tl\n"
        "print(Buffer.__module__, tl.TransformListener.__module__)",
        "1",
    )
    assert r.stdout == "tf2_ros.buffer tf2_ros.transform_listener\n"
    warnings = [line for line in r.stderr.splitlines() if HOOK_WARNING in line]
    assert len(warnings) == 1, r.stderr
    # rcutils' format, logger tf_shm, and the cause named.
    assert re.match(r"\[WARN\] \[\d+\.\d+\] \[tf_shm\]: ", warnings[0]), warnings[0]
    assert "ImportError" in warnings[0], warnings[0]


# -- real nodes through the bridge -------------------------------------------------------------

NUM = r"(-?[0-9.e+-]+)"
GOT = re.compile(
    r"\[(\w+)\]: Got geometry_msgs\.msg\.TransformStamped\(header=std_msgs\.msg\.Header\("
    rf"stamp=builtin_interfaces\.msg\.Time\(sec=(\d+), nanosec=(\d+)\), frame_id='(\w+)'\), "
    rf"child_frame_id='(\w+)', transform=geometry_msgs\.msg\.Transform\(translation="
    rf"geometry_msgs\.msg\.Vector3\(x={NUM}, y={NUM}, z={NUM}\), rotation="
    rf"geometry_msgs\.msg\.Quaternion\(x={NUM}, y={NUM}, z={NUM}, w={NUM}\)\)\)"
)


def _start(run, name, argv, env):
    """Run.start with this process's own environment."""
    with open(run.dir / f"{name}.log", "a") as log:
        p = subprocess.Popen(run.netns + argv, env=env, stdout=log, stderr=log)
    p.name, p.log = name, run.dir / f"{name}.log"
    run.procs.append(p)
    return p


def _example(run, venvs, example, node_name, hook, python="good"):
    code = f"from examples_tf2_py.{example} import main; main()"
    argv = [venvs[python], "-c", code, "--ros-args", "-r", f"__node:={node_name}"]
    return _start(run, node_name, argv, _env(run.env, hook))


def _broadcasters(run, venvs):
    for ex in ("static_broadcaster", "dynamic_broadcaster"):
        _example(run, venvs, ex, ex, None)


def _answers(proc, since=0):
    """The example's "Got TransformStamped" answers logged after byte `since` of its log."""
    return [
        {
            "node": m[0],
            "stamp": [int(m[1]), int(m[2])],
            "frames": [m[3], m[4]],
            "xyz": [float(v) for v in m[5:8]],
            "xyzw": [float(v) for v in m[8:12]],
        }
        for m in GOT.findall(proc.log.read_text()[since:])
    ]


def _stop(run, procs):
    for p in procs:
        run.check_alive(p)
        p.send_signal(signal.SIGINT)
    for p in procs:
        p.wait(timeout=15)


def _frames(text):
    """frame -> parent, from every all_frames_as_yaml() frame_dumper printed."""
    parents, frame = {}, None
    for line in text.splitlines():
        m = re.match(r"^(\w+):\s*$", line)
        if m:
            frame = m[1]
            continue
        m = re.match(r"^\s+parent: '?([^'\s]+)'?\s*$", line)
        if m and frame is not None:
            assert parents.setdefault(frame, m[1]) == m[1], (frame, m[1], parents)
    return parents


# The pair the example nodes look up (target, source); the reference is ready once it holds it.
PAIR = ("starboard_wheel", "sonar_2")


class Reference:
    """tests/e2e/tf2_ros_reference.py, listening from the start: it must hold every stamp the
    nodes answer at, so it is ready once it can transform PAIR."""

    def __init__(self, run):
        self.run = run
        self.proc = subprocess.Popen(
            run.netns
            + [sys.executable, str(ROOT / "tests" / "e2e" / "tf2_ros_reference.py"), *PAIR],
            env=_env(run.env, None),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def wait_ready(self, timeout=30):
        """Blocks until the reference holds a transform; then returns."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        assert json.loads(line or "{}").get("ready"), f"reference not ready\n{self.run.logs()}"

    def ask(self, request):
        try:
            out, err = self.proc.communicate(json.dumps(request), timeout=60)
        finally:
            self.close()
        assert self.proc.returncode == 0, f"reference failed:\n{out}\n{err}\n{self.run.logs()}"
        return json.loads(out.splitlines()[-1])

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _request(answers, nodes, subscribers):
    return {
        "queries": [[*a["frames"], *a["stamp"]] for a in answers],
        "nodes": list(nodes),
        "subscribers": list(subscribers),
    }


def _assert_unsubscribed(result, hooked, subscribed):
    for name in (*hooked, *subscribed):
        assert name in result["nodes"], (name, result["nodes"])
    for topic in ("/tf", "/tf_static"):
        subs = result["subscribers"][topic]
        assert set(subscribed) <= set(subs), (topic, subs)
        assert not set(subs) & set(hooked), (topic, subs)


def _assert_tf2_answers(answers, result):
    assert len(answers) == len(result["answers"])
    pairs = list(zip(answers, result["answers"]))
    # The reference may have matched /tf after the bridge did: answers at stamps older than its
    # first sample (tf2: extrapolation into the past) can lead; they are not compared, the rest
    # are, and at least two remain.
    while pairs and "extrapolation into the past" in pairs[0][1].get("error", ""):
        pairs.pop(0)
    assert len(pairs) >= 2, result
    for a, want in pairs:
        assert "error" not in want, (a, want)
        assert a["frames"] == list(PAIR), a
        worst = max(abs(x - y) for x, y in zip(a["xyz"] + a["xyzw"], want["xyz"] + want["xyzw"]))
        assert worst <= 1e-9, (a, want)


EXAMPLE_FRAMES = {
    "platform": "base_link",
    "camera": "platform",
    "sonar_0": "platform",
    "sonar_1": "platform",
    "sonar_2": "platform",
    "port_wheel": "base_link",
    "starboard_wheel": "base_link",
}


def test_unmodified_tf2_ros_nodes_read_tf_shm_without_subscribing(run, venvs):
    ref = Reference(run)
    try:
        bridge = run.bridge()
        _broadcasters(run, venvs)
        ref.wait_ready()
        hooked = [
            _example(run, venvs, "async_waits_for_transform", "hooked_async", "1"),
            _example(run, venvs, "blocking_waits_for_transform", "hooked_blocking", "1"),
            _example(run, venvs, "frame_dumper", "hooked_dumper", "1"),
        ]
        plain = [
            _example(run, venvs, "async_waits_for_transform", "plain_async", None),
            _example(run, venvs, "frame_dumper", "plain_dumper", None),
        ]

        def enough():
            run.check_alive(bridge, *hooked, *plain)
            got = _answers(hooked[0]) + _answers(plain[0])
            nodes = {a["node"] for a in got}
            return (
                all(sum(a["node"] == n for a in got) >= 3 for n in nodes)
                and len(nodes) == 2
                and got
            )

        answers = wait_for("3 answers of each async example", enough, 60, run)
        subscribed = ["tf_shm_bridge", "plain_async", "plain_dumper"]
        names = [p.name for p in hooked]
        result = ref.ask(_request(answers, ["tf_shm_bridge", *names], subscribed))
    finally:
        ref.close()
    _assert_unsubscribed(result, names, subscribed)
    _assert_tf2_answers(answers, result)

    _stop(run, hooked + plain)
    blocking = hooked[1].log.read_text()
    assert blocking.count("Got transform") >= 2 and "transform not ready" not in blocking, blocking
    hooked_frames = _frames(hooked[2].log.read_text())
    assert hooked_frames == _frames(plain[1].log.read_text()) == EXAMPLE_FRAMES, hooked_frames


@pytest.fixture
def ament_prefix(venvs, tmp_path):
    """An ament prefix with tf_shm_bridge (this tree's launch files, params and binary) and the
    vendored examples_tf2_py (console scripts run by the tf_shm venv's Python), as colcon would
    install them."""
    from harness import BRIDGE

    prefix = tmp_path / "install"
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    for pkg in ("tf_shm_bridge", "examples_tf2_py"):
        (index / pkg).write_text("")
        (prefix / "share" / pkg).mkdir(parents=True)
        (prefix / "lib" / pkg).mkdir(parents=True)
    share = prefix / "share" / "tf_shm_bridge"
    # Copies: ros2 launch looks for launch files with os.walk, which does not follow links.
    for d in ("launch", "config"):
        shutil.copytree(ROOT / d, share / d)
    shutil.copy(ROOT / "package.xml", share)
    (prefix / "lib" / "tf_shm_bridge" / "tf_shm_bridge").symlink_to(BRIDGE)
    ex = VENDORED / "examples_tf2_py"
    shutil.copytree(ex / "launch", prefix / "share" / "examples_tf2_py" / "launch")
    for script in ex.glob("*.py"):
        if script.stem == "__init__":
            continue
        exe = prefix / "lib" / "examples_tf2_py" / script.stem
        exe.write_text(
            f"#!{venvs['good']}\nfrom examples_tf2_py.{script.stem} import main\nmain()\n"
        )
        exe.chmod(0o755)
    return prefix


@pytest.mark.parametrize(("listeners_after", "opt_in"), [("0.0", "1"), ("3.0", "1"), ("0.0", "0")])
def test_launch_file_switches_a_robots_launch_file_with_one_argument(
    run, venvs, ament_prefix, listeners_after, opt_in
):
    """ros2 launch tf_shm_bridge tf2_ros_on_tf_shm.launch.py launch_file:=<a launch file that
    knows nothing of tf_shm>: its tf2_ros listeners read the bridge's arena, hold no
    subscription, and answer as tf2 does; started with everything else, or later by a
    TimerAction. With tf2_ros_on_tf_shm:=0 they are tf2_ros's own again (and subscribe)."""
    env = _env(run.env, None)
    env["AMENT_PREFIX_PATH"] = os.pathsep.join([str(ament_prefix), env["AMENT_PREFIX_PATH"]])
    xml = ROOT / "tests" / "e2e" / "tf2_ros_examples.launch.xml"
    ref = Reference(run)
    try:
        launch = _start(
            run,
            "launch",
            [
                "ros2",
                "launch",
                "tf_shm_bridge",
                "tf2_ros_on_tf_shm.launch.py",
                f"launch_file:={xml}",
                f"listeners_after:={listeners_after}",
                f"tf2_ros_on_tf_shm:={opt_in}",
            ],
            env,
        )
        ref.wait_ready()
        since = len(launch.log.read_text())

        def enough():
            run.check_alive(launch)
            got = [a for a in _answers(launch, since) if a["node"] == "launched_async"]
            return len(got) >= 4 and got

        try:
            answers = wait_for("4 answers of the launched async example", enough, 60)
        except pytest.fail.Exception:
            lines = launch.log.read_text().splitlines()
            pytest.fail("\n".join(x for x in lines if not x.startswith("[frame_dumper-")))
        names = ["launched_async", "launched_dumper"]
        hooked, subscribed = (names, []) if opt_in == "1" else ([], names)
        result = ref.ask(
            _request(answers, ["tf_shm_bridge", *names], ["tf_shm_bridge", *subscribed])
        )
    finally:
        ref.close()
    _assert_unsubscribed(result, hooked, ["tf_shm_bridge", *subscribed])
    _assert_tf2_answers(answers, result)
    _stop(run, [launch])
    dumper = [
        line.split("] ", 1)[1]
        for line in launch.log.read_text().splitlines()
        if line.startswith("[frame_dumper-")
    ]
    frames = _frames("\n".join(dumper))
    assert frames == EXAMPLE_FRAMES, frames


def test_hooked_nodes_started_before_the_bridge(run, venvs):
    """The nodes start well before the bridge and the broadcasters (more than 7 s: longer than
    the 5 s a Buffer once waited for a bridge): as tf2_ros's, their buffers are empty until then
    (the blocking example's 5 s waits end in "transform not ready", nothing crashes), then they
    answer; the async example's coroutine, waiting from the start, is resumed when the
    transform comes."""
    nodes = [
        _example(run, venvs, "blocking_waits_for_transform", "early_blocking", "1"),
        _example(run, venvs, "async_waits_for_transform", "early_async", "1"),
    ]
    time.sleep(7)
    wait_for(
        "the blocking example's first wait to end empty",
        lambda: run.check_alive(*nodes) or "transform not ready" in nodes[0].log.read_text(),
        20,
        run,
    )
    assert not _answers(nodes[1]), run.logs()
    run.bridge()
    _broadcasters(run, venvs)
    wait_for(
        "the early nodes' first transforms",
        lambda: (
            run.check_alive(*nodes)
            or ("Got transform" in nodes[0].log.read_text() and _answers(nodes[1]))
        ),
        40,
        run,
    )


def _probe(run, request):
    """tests/e2e/tf2_ros_reference.py asked once, with no queries."""
    r = subprocess.run(
        run.netns + [sys.executable, str(ROOT / "tests" / "e2e" / "tf2_ros_reference.py")],
        input=json.dumps(request),
        env=_env(run.env, None),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, f"probe failed:\n{r.stdout}\n{r.stderr}\n{run.logs()}"
    return json.loads(r.stdout.splitlines()[-1])


def test_node_whose_tf_shm_cannot_load_runs_on_tf2_ros_listener(run, venvs):
    """No bridge at all: the broken venv's hooked frame_dumper warns once and gets the static
    frames through tf2_ros's own listener, whose /tf and /tf_static subscriptions it holds."""
    _example(run, venvs, "static_broadcaster", "static_broadcaster", None)
    node = _example(run, venvs, "frame_dumper", "fallback_dumper", "1", python="broken")
    wait_for(
        "the fallback node's frames",
        lambda: run.check_alive(node) or "sonar_2" in _frames(node.log.read_text()),
        40,
        run,
    )
    graph = _probe(run, {"queries": [], "nodes": [], "subscribers": ["fallback_dumper"]})
    for topic in ("/tf", "/tf_static"):
        assert "fallback_dumper" in graph["subscribers"][topic], graph
    _stop(run, [node])
    log = node.log.read_text()
    assert log.count(HOOK_WARNING) == 1, log
    assert _frames(log)["sonar_2"] == "platform"


# -- tf2_ros's own listener test, unmodified: spin_once() returns when data arrives ----------

LISTENER_TEST = "geometry2/tf2_ros_py/test/test_listener_and_broadcaster.py"
# Its tests against a fresh tf2_ros Buffer, on tf_shm's one history per host.
LISTENER_TEST_DIFFERS = {
    # foo <- bar at 1 s, broadcast by the test before, is in the host's history: the lookup
    # at 0.4 s interpolates between 0.3 s and 1 s where a fresh tf2_ros Buffer, holding only
    # 0.2 s and 0.3 s, extrapolates into the future.
    "TestBroadcasterAndListener::test_extrapolation_exception": "one history per host",
}


# Beside the unmodified test: its broadcasts go to the bridge, another DDS participant, which
# must have matched the test node's /tf publisher before the first one (tf2_ros's in-process
# listener hears them at once; /tf is volatile, so a message sent before is the bridge's loss).
LISTENER_TEST_CONFTEST = """
import time

import pytest


@pytest.fixture(autouse=True)
def bridge_matched(request):
    cls = request.cls
    if cls is not None and not getattr(cls, "_bridge_matched", False):
        node, pub = cls.node, cls.broadcaster.pub_tf
        deadline = time.monotonic() + 30
        while True:
            subs = node.get_subscriptions_info_by_topic("/tf")
            bridge = any(i.node_name == "tf_shm_bridge" for i in subs)
            if bridge and pub.get_subscription_count() >= len(subs):
                break
            assert time.monotonic() < deadline, "the bridge never matched the test's /tf"
            time.sleep(0.02)
        cls._bridge_matched = True
    yield
"""


def test_tf2_ros_listener_test_runs_opted_in_and_spin_once_returns(run, venvs, tmp_path):
    """geometry2's ``tf2_ros_py/test/test_listener_and_broadcaster.py``, unmodified, run by
    pytest plain and with TF_SHM_TF2_ROS=1 against a live bridge. Each of its tests
    broadcasts and then calls ``executor.spin_once()`` without a timeout, which returns once
    tf2_ros's listener subscription has run: opted in, the node has no /tf subscription, and
    spin_once returns because tf_shm's listener triggers the node's guard condition when the
    bridge stores the message (a hang here is the failure). Outcomes compared per test. A
    conftest beside it waits, before the first test, for the bridge to match the test's /tf
    publisher (see LISTENER_TEST_CONFTEST): in both runs, so they see the same graph."""
    sources = os.environ.get("TF_SHM_ROS_SOURCES")
    assert sources, "TF_SHM_ROS_SOURCES (the ROS 2 Jazzy sources) is not set"
    src = Path(sources) / LISTENER_TEST
    run.bridge()
    wait_for(
        "the bridge to serve",
        lambda: (run.dir / "rt").exists() and any((run.dir / "rt").iterdir()),
        20,
        run,
    )
    results = {}
    for hook in (None, "1"):
        work = tmp_path / f"hook{hook}"
        work.mkdir()
        (work / src.name).write_text(src.read_text())
        (work / "conftest.py").write_text(LISTENER_TEST_CONFTEST)
        junit = work / "junit.xml"
        try:
            r = subprocess.run(
                [
                    *run.netns,
                    venvs["good"],
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    f"--junitxml={junit}",
                    "-o",
                    "junit_family=xunit1",
                    # A hang (spin_once never returning) prints every thread's stack, then fails.
                    "-o",
                    "faulthandler_timeout=30",
                    src.name,
                ],
                cwd=work,
                env=_env(run.env, hook),
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except subprocess.TimeoutExpired as e:
            pytest.fail(
                f"hook {hook}: the test hung (spin_once?)\n{e.stdout}\n{e.stderr}\n{run.logs()}"
            )
        assert junit.exists(), f"hook {hook}: no test ran\n{r.stdout}\n{r.stderr}\n{run.logs()}"
        out = {}
        for case in ET.parse(junit).getroot().iter("testcase"):
            name = f"{case.get('classname').split('.')[-1]}::{case.get('name')}"
            kinds = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
            out[name] = kinds[0] if kinds else "passed"
        results[hook] = (out, r.stdout + r.stderr)
    plain, (hooked, log) = results[None][0], results["1"]
    assert plain and set(plain) == set(hooked), (plain, hooked)
    assert all(v == "passed" for v in plain.values()), results[None][1]
    wrong = {
        t: f"{hooked[t]} opted in, {plain[t]} on tf2_ros"
        for t in plain
        if t not in LISTENER_TEST_DIFFERS and hooked[t] != plain[t]
    }
    assert not wrong, f"{wrong}\n{log}\n{run.logs()}"
    assert sum(v == "passed" for v in hooked.values()) >= 2, log
