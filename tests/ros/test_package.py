"""The ROS package as users and colcon see it: package.xml's dependencies match what the package
uses, colcon finds only the ROS packages, and the params file and the bridge's options agree.
The launch files run under the real `ros2 launch` in test_launch.py.
"""

import ast
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = str(
    Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "tf_shm_bridge"
)
PARAMS = ROOT / "config" / "tf_shm_bridge.yaml"
LAUNCH_DIR = ROOT / "launch"


# ---------------------------------------------------------------------------------------------
# package.xml


def package_deps():
    root = ET.parse(ROOT / "package.xml").getroot()
    deps = {}
    for kind in ("depend", "build_depend", "exec_depend", "test_depend", "buildtool_depend"):
        deps[kind] = {e.text.strip() for e in root.findall(kind)}
    return deps


def r2r_links():
    """Libraries r2r's build scripts link (cargo:rustc-link-lib=dylib=NAME)."""
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--offline"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    libs = set()
    for pkg in meta["packages"]:
        if pkg["name"] in ("r2r_rcl", "r2r_actions"):
            build = Path(pkg["manifest_path"]).with_name("build.rs").read_text()
            libs |= set(re.findall(r"rustc-link-lib=dylib=(\w+)", build))
    assert "rcl" in libs, "r2r's build scripts not found"
    return libs


def message_packages():
    """IDL packages r2r generates: our filter (scripts/ros-env.sh) plus those r2r always adds."""
    env = (ROOT / "scripts" / "ros-env.sh").read_text()
    ours = set(re.search(r'IDL_PACKAGE_FILTER "([^"]+)"', env).group(1).split(";"))
    return ours | {"rcl_interfaces", "builtin_interfaces", "unique_identifier_msgs", "action_msgs"}


def needed_packages():
    """ROS packages the built node loads (DT_NEEDED), named as their libraries are."""
    out = subprocess.run(
        ["readelf", "-d", BRIDGE], capture_output=True, text=True, check=True
    ).stdout
    libs = re.findall(r"\[lib(\w+?)(?:__rosidl_\w+)?\.so\]", out)
    return {lib for lib in libs if lib not in ("c", "gcc_s", "m", "dl", "pthread", "stdc++")}


def python_imports(paths):
    mods = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                mods |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                mods.add(node.module.split(".")[0])
    return {m for m in mods if m not in sys.stdlib_module_names}


# rosdep keys of the Python modules that are not ROS packages.
ROSDEP_KEYS = {"pytest": "python3-pytest", "yaml": "python3-yaml"}
# ROS packages whose Python module is named otherwise.
ROS_PACKAGE_OF = {"tf2_ros": "tf2_ros_py"}


def test_package_xml_build_and_exec_depends_match_what_the_node_uses(bridge_bin):
    deps = package_deps()
    assert deps["buildtool_depend"] == {"ament_cargo"}
    build = deps["depend"] | deps["build_depend"]
    used = r2r_links() | message_packages() | needed_packages() | {"rmw_implementation"}
    assert used - build == set(), f"used but not in <depend>: {sorted(used - build)}"
    assert build - used == set(), f"<depend> the node does not use: {sorted(build - used)}"
    exec_ = deps["depend"] | deps["exec_depend"]
    launch = python_imports(LAUNCH_DIR.glob("*.py"))
    assert launch - exec_ == set(), f"launch files import undeclared: {sorted(launch - exec_)}"
    assert deps["exec_depend"] - launch == set(), (
        f"unused <exec_depend>: {deps['exec_depend'] - launch}"
    )


def test_package_xml_test_depends_match_the_tests():
    deps = package_deps()
    # What the ROS 2 tests run, the tf2 reference (tests/e2e/tf2_ref.py: tf2_ros) among them.
    files = [
        *(ROOT / "tests" / "ros").glob("*.py"),
        ROOT / "tests" / "e2e" / "test_pr2.py",
        ROOT / "tests" / "e2e" / "tf2_ref.py",
        ROOT / "tests" / "harness.py",
        ROOT / "scripts" / "pr2_publisher.py",
    ]
    # The tests' own modules (conftest, tests/harness.py, test_pr2's helpers) are not packages.
    own = {"conftest"} | {f.stem for f in ROOT.joinpath("tests").rglob("*.py")}
    tests = {ROSDEP_KEYS.get(m, ROS_PACKAGE_OF.get(m, m)) for m in python_imports(files)} - own
    declared = deps["test_depend"] | deps["depend"]
    assert tests - declared == set(), f"tests import undeclared: {sorted(tests - declared)}"
    assert deps["test_depend"] - tests == set(), (
        f"unused <test_depend>: {deps['test_depend'] - tests}"
    )


def test_colcon_finds_only_the_ros_packages(tmp_path):
    """colcon-cargo would take every Cargo workspace member for a package of its own (building it
    with --profile dev, which `--cargo-args --release` contradicts, and installing its test and
    benchmark binaries); each crate carries a COLCON_IGNORE, so only the node and the C/C++
    library (an ament package that C++ nodes find_package) are built."""
    r = subprocess.run(
        ["colcon", "--log-base", str(tmp_path / "log"), "list", "--base-paths", str(ROOT)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    found = [line.split("\t") for line in r.stdout.splitlines()]
    assert found == [
        ["tf_shm_bridge", str(ROOT), "(ament_cargo)"],
        ["tf_shm_c", str(ROOT / "crates" / "tf_shm_c"), "(ros.cmake)"],
    ], r.stdout


# ---------------------------------------------------------------------------------------------
# Parameters


def test_params_file_is_keyed_for_any_node_and_matches_the_options(bridge_bin):
    doc = yaml.safe_load(PARAMS.read_text())
    assert list(doc) == ["/**"], "params must apply whatever the node's name and namespace"
    params = doc["/**"]["ros__parameters"]
    help_text = subprocess.run(
        [bridge_bin, "--help"], capture_output=True, text=True, check=True
    ).stdout
    options_part = help_text.split("Options:")[1].split("ROS arguments")[0]
    options = set(re.findall(r"^\s+(?:-\w, )?--([a-z][a-z0-9-]*)", options_part, re.MULTILINE)) - {
        "help",
        "version",
    }
    # Options whose help says "Command line only" apply before the node and its parameters
    # exist: they are no parameter, and the params file says so in a comment.
    blocks = re.split(r"^\s+(?:-\w, )?--(?=[a-z])", options_part, flags=re.MULTILINE)[1:]
    cli_only = {b.split()[0] for b in blocks if "Command line only" in b}
    # use_sim_time is every ROS node's standard parameter, not a bridge option.
    names = {k.replace("_", "-") for k in params} - {"use-sim-time"}
    assert names - options == set(), f"params the bridge does not accept: {names - options}"
    assert names & cli_only == set(), (
        f"command-line-only options given as params: {names & cli_only}"
    )
    missing = options - names - cli_only
    assert missing == set(), f"bridge options missing from {PARAMS.name}: {missing}"
    for option in cli_only:
        assert f"--{option}" in PARAMS.read_text(), (
            f"{PARAMS.name} does not say --{option} is no parameter"
        )


def test_help_documents_ros_arguments(bridge_bin):
    text = subprocess.run([bridge_bin, "--help"], capture_output=True, text=True, check=True).stdout
    for needle in (
        "--ros-args",
        "--params-file",
        "use_sim_time",
        "--log-level",
        "__ns:=",
        "/rosout",
    ):
        assert needle in text, f"--help does not mention {needle}"
    assert "\x1b[" not in text
