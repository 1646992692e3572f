"""Unmodified tf2_ros Python nodes on tf_shm: the bridge, and every node of another launch file
started with TF_SHM_TF2_ROS=1, so their ``tf2_ros.Buffer`` / ``TransformListener`` are tf_shm's
(no /tf or /tf_static subscription in any of them; the bridge holds the only ones).

    ros2 launch tf_shm_bridge tf2_ros_on_tf_shm.launch.py launch_file:=/path/to/robot.launch.py
        [tf2_ros_on_tf_shm:=0] [params_file:=my_bridge.yaml] [any argument of launch_file]

``launch_file`` is any launch file (Python, XML or YAML); its own arguments are given on the
same command line. The bridge runs with ``params_file`` (default: the package's
config/tf_shm_bridge.yaml) on /tf and /tf_static. ``tf2_ros_on_tf_shm:=0`` switches every node
back to tf2_ros's own listeners without editing anything. The variable is set for every process
the launch starts (the bridge, a Rust node, ignores it); it takes effect in Python processes
whose environment has the tf_shm wheel installed (``pip install tf_shm-*.whl``: its .pth hook).
C++ nodes are not affected. To switch one of your own launch files instead, add one line,
``SetEnvironmentVariable("TF_SHM_TF2_ROS", "1")``, before its nodes (README: Python nodes
without code changes).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import (
    DeclareLaunchArgument,
    IncludeLaunchDescription,
    SetEnvironmentVariable,
)
from launch.launch_description_sources import AnyLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription


def generate_launch_description():
    share = get_package_share_directory("tf_shm_bridge")
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "launch_file",
                description="Launch file whose nodes read TF from tf_shm (Python, XML or YAML)",
            ),
            DeclareLaunchArgument(
                "tf2_ros_on_tf_shm",
                default_value="1",
                description="TF_SHM_TF2_ROS for the launch file's processes: 1 tf_shm, 0 tf2_ros",
            ),
            DeclareLaunchArgument(
                "params_file",
                default_value=os.path.join(share, "config", "tf_shm_bridge.yaml"),
                description="YAML file with tf_shm_bridge parameters (keyed /**)",
            ),
            Node(
                package="tf_shm_bridge",
                executable="tf_shm_bridge",
                name="tf_shm_bridge",
                output="screen",
                parameters=[LaunchConfiguration("params_file")],
            ),
            # Not in a scoped GroupAction: a scope's environment is gone by the time delayed
            # actions of the included file (TimerAction, event handlers) start their processes.
            SetEnvironmentVariable("TF_SHM_TF2_ROS", LaunchConfiguration("tf2_ros_on_tf_shm")),
            IncludeLaunchDescription(
                AnyLaunchDescriptionSource(LaunchConfiguration("launch_file"))
            ),
        ]
    )
