"""Two robots on one host: one bridge each, in the robot's namespace, on its own arena.

    ros2 launch tf_shm_bridge two_robots.launch.py

robot1's bridge serves /robot1/tf and /robot1/tf_static as arena "robot1", robot2's likewise;
consumers pick one with TF_SHM_NAME=robot1 (or tf_shm::Join's name). Both use the same params
file, keyed /** so it applies under any namespace. A second bridge on the same arena name and
domain is refused, so each robot needs its own arena_name.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource

from launch import LaunchDescription

ROBOTS = ("robot1", "robot2")


def generate_launch_description():
    bridge = os.path.join(
        get_package_share_directory("tf_shm_bridge"), "launch", "tf_shm_bridge.launch.py"
    )
    return LaunchDescription(
        [
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(bridge),
                launch_arguments={"namespace": robot, "arena_name": robot}.items(),
            )
            for robot in ROBOTS
        ]
    )
