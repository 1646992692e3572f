"""The tf2_msgs we build (ros/tf2_msgs) must hash like upstream's, or real tf2_ros nodes and ours
do not match on /tf. Run: scripts/ros-env.sh run python3 -m pytest tests/ros"""

import json
import os
from pathlib import Path

import pytest

# What real ROS 2 Jazzy systems publish.
TFMESSAGE = "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087"
LOOKUP_TRANSFORM = {
    "tf2_msgs/action/LookupTransform": "RIHS01_0b8adf6bc0b5958879e3265b41a457e03558fe523890a81252c70eba97a82c5d",
    "tf2_msgs/action/LookupTransform_SendGoal": "RIHS01_4646ff5706c86b04d0a1098d329951a9731a7517e16702905de6073cc72c8530",
    "tf2_msgs/action/LookupTransform_GetResult": "RIHS01_3cd1715751899e3167b5aec3e4ac194f7da9e8493a77285f9f6a4c914f5e8b24",
    "tf2_msgs/action/LookupTransform_FeedbackMessage": "RIHS01_10cb89922dcb103e95c185d43e8a5efa3d38db996f733151a2f3e2ac133f4839",
}


def tf2_msgs_share() -> Path:
    """share/tf2_msgs of the first prefix that has it: AMENT_PREFIX_PATH (also apt ROS), then
    the default prefix of scripts/ros-env.sh."""
    default = (
        Path(os.environ.get("TF_SHM_ROS_PREFIX", Path.home() / ".cache/tf_shm/ros-jazzy"))
        / "tf2_msgs"
    )
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(":") if p]
    for prefix in [*prefixes, default]:
        share = Path(prefix) / "share/tf2_msgs"
        if (share / "msg/TFMessage.json").is_file():
            return share
    pytest.fail(
        "tf2_msgs is not installed (no share/tf2_msgs/msg/TFMessage.json in "
        f"AMENT_PREFIX_PATH or {default}): run scripts/ros-env.sh setup"
    )


def hashes(path: Path) -> dict:
    return {h["type_name"]: h["hash_string"] for h in json.loads(path.read_text())["type_hashes"]}


def test_tfmessage_hash_matches_upstream():
    got = hashes(tf2_msgs_share() / "msg/TFMessage.json")
    assert got["tf2_msgs/msg/TFMessage"] == TFMESSAGE


def test_lookup_transform_action_hashes_match_upstream():
    got = hashes(tf2_msgs_share() / "action/LookupTransform.json")
    assert {name: got.get(name) for name in LOOKUP_TRANSFORM} == LOOKUP_TRANSFORM
