"""The ROS package as users and colcon see it: package.xml's dependencies match what the package
uses, the params file and the bridge's options agree, and the launch files declare the arguments
the README documents and turn them into the right node.

`ros2 launch` is not installable from the package registries this project uses, so the launch
files run against recording stand-ins of the few launch classes they use: their logic (which
arguments exist, what reaches the node) is executed, launch itself is not.
"""

import ast
import json
import os
import re
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = str(
    Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "tf_shm_bridge"
)
PARAMS = ROOT / "config" / "tf_shm_bridge.yaml"
LAUNCH_DIR = ROOT / "launch"
ARGUMENTS = {"params_file", "arena_name", "domain", "namespace", "log_level", "use_sim_time"}


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
    # What the ROS 2 tests run; tests/e2e/tf2_ref.py is the ROS 1 reference (Debian's python3-tf2
    # under /usr/bin/python3), not a dependency of this package.
    files = [
        *(ROOT / "tests" / "ros").glob("*.py"),
        ROOT / "tests" / "e2e" / "test_pr2.py",
        ROOT / "tests" / "harness.py",
        ROOT / "scripts" / "pr2_publisher.py",
    ]
    # The tests' own modules (conftest, tests/harness.py, test_pr2's helpers) are not packages.
    own = {"conftest"} | {f.stem for f in ROOT.joinpath("tests").rglob("*.py")}
    tests = {ROSDEP_KEYS.get(m, m) for m in python_imports(files)} - own
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
    # use_sim_time is every ROS node's standard parameter, not a bridge option.
    names = {k.replace("_", "-") for k in params} - {"use-sim-time"}
    assert names - options == set(), f"params the bridge does not accept: {names - options}"
    assert options - names == set(), f"bridge options missing from {PARAMS.name}: {options - names}"


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


# ---------------------------------------------------------------------------------------------
# Launch files


class Recorded:
    """Stand-in for a launch class: keeps its arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class LaunchConfiguration:
    def __init__(self, name):
        self.name = name

    def perform(self, context):
        return context.launch_configurations[self.name]


class Context:
    def __init__(self, values):
        self.launch_configurations = values


def stand_in_modules():
    def mod(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        return m

    kinds = {
        k: type(k, (Recorded,), {})
        for k in (
            "LaunchDescription",
            "DeclareLaunchArgument",
            "OpaqueFunction",
            "IncludeLaunchDescription",
            "PythonLaunchDescriptionSource",
            "Node",
            "ParameterValue",
        )
    }
    return kinds, {
        "launch": mod("launch", LaunchDescription=kinds["LaunchDescription"]),
        "launch.actions": mod(
            "launch.actions",
            **{
                k: kinds[k]
                for k in ("DeclareLaunchArgument", "OpaqueFunction", "IncludeLaunchDescription")
            },
        ),
        "launch.substitutions": mod(
            "launch.substitutions", LaunchConfiguration=LaunchConfiguration
        ),
        "launch.launch_description_sources": mod(
            "launch.launch_description_sources",
            PythonLaunchDescriptionSource=kinds["PythonLaunchDescriptionSource"],
        ),
        "launch_ros": mod("launch_ros"),
        "launch_ros.actions": mod("launch_ros.actions", Node=kinds["Node"]),
        "launch_ros.parameter_descriptions": mod(
            "launch_ros.parameter_descriptions", ParameterValue=kinds["ParameterValue"]
        ),
        "ament_index_python": mod("ament_index_python"),
        "ament_index_python.packages": mod(
            "ament_index_python.packages", get_package_share_directory=lambda p: f"/share/{p}"
        ),
    }


@pytest.fixture
def launch_file(monkeypatch):
    """Loads a launch file against the stand-ins; returns (description, stand-in classes)."""
    kinds, modules = stand_in_modules()
    for name, m in modules.items():
        monkeypatch.setitem(sys.modules, name, m)

    def load(name):
        ns = {"__file__": str(LAUNCH_DIR / name)}
        exec(compile((LAUNCH_DIR / name).read_text(), name, "exec"), ns)  # noqa: S102 (as ros2 launch loads it)
        return ns["generate_launch_description"](), kinds

    return load


def bridge_node(description, kinds, **given):
    """The Node the bridge launch file builds for launch arguments `given` (others default)."""
    actions = description.args[0]
    declared = {
        a.args[0]: a.kwargs for a in actions if isinstance(a, kinds["DeclareLaunchArgument"])
    }
    values = {name: given.get(name, kw["default_value"]) for name, kw in declared.items()}
    (fn,) = [a for a in actions if isinstance(a, kinds["OpaqueFunction"])]
    (node,) = fn.kwargs["function"](Context(values))
    return node.kwargs


def test_bridge_launch_declares_the_documented_arguments(launch_file):
    description, kinds = launch_file("tf_shm_bridge.launch.py")
    declared = {
        a.args[0]: a.kwargs
        for a in description.args[0]
        if isinstance(a, kinds["DeclareLaunchArgument"])
    }
    assert set(declared) == ARGUMENTS
    assert all(kw["description"] for kw in declared.values())
    assert (
        declared["params_file"]["default_value"] == "/share/tf_shm_bridge/config/tf_shm_bridge.yaml"
    )
    readme = (ROOT / "README.md").read_text()
    for name in ARGUMENTS:
        assert f"{name}:=" in readme, f"README does not document launch argument {name}"


def test_bridge_launch_defaults_leave_the_params_file_in_charge(launch_file):
    node = bridge_node(*launch_file("tf_shm_bridge.launch.py"))
    assert (node["package"], node["executable"], node["name"]) == ("tf_shm_bridge",) * 3
    params_file, overrides = node["parameters"]
    assert params_file.endswith("config/tf_shm_bridge.yaml")
    assert set(overrides) == {"use_sim_time"} and overrides["use_sim_time"].args == ("false",)
    assert overrides["use_sim_time"].kwargs == {"value_type": bool}
    assert node["namespace"] is None
    assert node["ros_arguments"] == ["--log-level", "info"]
    assert set(node["remappings"]) == {("/tf", "tf"), ("/tf_static", "tf_static")}


def test_bridge_launch_arguments_reach_the_node(launch_file):
    node = bridge_node(
        *launch_file("tf_shm_bridge.launch.py"),
        arena_name="robot1",
        domain="7",
        namespace="robot1",
        log_level="tf_shm_bridge:=debug",
        use_sim_time="true",
        params_file="/tmp/mine.yaml",
    )
    params_file, overrides = node["parameters"]
    assert params_file == "/tmp/mine.yaml"
    got = {k: (v.args[0], v.kwargs["value_type"]) for k, v in overrides.items()}
    assert got == {
        "arena_name": ("robot1", str),
        "domain": ("7", int),
        "use_sim_time": ("true", bool),
    }
    assert node["namespace"] == "robot1"
    assert node["ros_arguments"] == ["--log-level", "tf_shm_bridge:=debug"]


def test_two_robots_launch_has_one_arena_per_robot(launch_file):
    description, kinds = launch_file("two_robots.launch.py")
    includes = [a for a in description.args[0] if isinstance(a, kinds["IncludeLaunchDescription"])]
    args = [dict(i.kwargs["launch_arguments"]) for i in includes]
    assert [i.args[0].args[0] for i in includes] == [
        "/share/tf_shm_bridge/launch/tf_shm_bridge.launch.py"
    ] * 2
    assert len({a["arena_name"] for a in args}) == 2 and all(
        a["namespace"] == a["arena_name"] for a in args
    )
    assert set().union(*args) <= ARGUMENTS
