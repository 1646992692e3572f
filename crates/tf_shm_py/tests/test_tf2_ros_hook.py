"""The wheel's TF_SHM_TF2_ROS hook where no ROS is installed (this suite's venv, into which
scripts/py-wheel.sh pip-installs the wheel: a site directory, so its .pth runs). The ROS side
(tf2_ros patched, real nodes) is tests/e2e/test_tf2_ros_opt_in.py at the repository root."""

import json
import os
import subprocess
import sys

PROBE = """
import json, sys
before = sorted(m for m in ("_tf_shm_tf2_ros", "tf_shm", "tf2_ros") if m in sys.modules)
import tf_shm
print(json.dumps({"before": before, "tf2_ros": "tf2_ros" in sys.modules,
                  "finder": any(type(f).__module__ == "_tf_shm_tf2_ros" for f in sys.meta_path)}))
"""


def probe(value):
    env = {k: v for k, v in os.environ.items() if k != "TF_SHM_TF2_ROS"}
    if value is not None:
        env["TF_SHM_TF2_ROS"] = value
    r = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
    return json.loads(r.stdout)


def test_the_wheels_pth_installs_only_the_finder_when_asked():
    # Start-up imports the small hook module only: not tf_shm, not tf2_ros.
    assert probe("1") == {"before": ["_tf_shm_tf2_ros"], "tf2_ros": False, "finder": True}


def test_without_the_variable_nothing_is_imported_or_installed():
    for value in (None, "0", "", "true"):
        assert probe(value) == {"before": [], "tf2_ros": False, "finder": False}, value
