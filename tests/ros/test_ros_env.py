"""scripts/ros-env.sh: setup reruns when what it builds from changes, and the environment it
makes has ROS 2 Jazzy's own tf2_ros, tf2_geometry_msgs, launch_ros and ros2."""

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROS_ENV = ROOT / "scripts" / "ros-env.sh"
PREFIX = Path(os.environ.get("TF_SHM_ROS_PREFIX", Path.home() / ".cache/tf_shm/ros-jazzy"))


def sources():
    """The folder setup built from: TF_SHM_ROS_SOURCES (CI), else its own git checkouts."""
    folder = Path(os.environ.get("TF_SHM_ROS_SOURCES") or PREFIX / "sources")
    assert (folder / "COMMITS").is_file(), f"no ROS 2 Jazzy sources in {folder}"
    return folder


def stamp(sources):
    env = dict(os.environ, TF_SHM_ROS_SOURCES=str(sources))
    return subprocess.run(
        [str(ROS_ENV), "stamp"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_stamp_covers_the_sources_commits(tmp_path):
    copy = tmp_path / "sources"
    copy.mkdir()
    shutil.copy(sources() / "COMMITS", copy / "COMMITS")
    before = stamp(copy)
    assert before == stamp(copy), "the stamp is not a function of its inputs"
    lines = (copy / "COMMITS").read_text().splitlines()
    name, commit = lines[0].split()
    lines[0] = f"{name} {'0' * len(commit)}"
    (copy / "COMMITS").write_text("\n".join(lines) + "\n")
    assert stamp(copy) != before, "a changed commit must make setup rerun"


def test_setup_is_current_and_jazzy_packages_import():
    # scripts/test.sh ran setup before the tests: the stamp it wrote must be today's.
    assert (PREFIX / "stamp").read_text().strip() == stamp(sources())
    code = (
        "import tf2_ros, tf2_py, tf2_geometry_msgs, launch_ros, tf2_tools.view_frames\n"
        "print(tf2_ros.__file__, tf2_py.__file__, tf2_geometry_msgs.__file__)"
    )
    files = subprocess.run(
        ["python3", "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    # Jazzy's own packages from the ROS environment, not Debian's ROS 1 tf2_py.
    for file in files:
        assert Path(file).is_relative_to(PREFIX), f"{file} is not from {PREFIX}"
    help_text = subprocess.run(
        ["ros2", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for command in ("launch", "run", "topic", "node", "param", "service"):
        assert f"  {command} " in help_text, f"ros2 {command} missing"
