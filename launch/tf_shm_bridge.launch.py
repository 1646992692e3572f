"""Start tf_shm_bridge with the default parameters of config/tf_shm_bridge.yaml.

    ros2 launch tf_shm_bridge tf_shm_bridge.launch.py [params_file:=...] [use_sim_time:=true]
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    default_params = os.path.join(
        get_package_share_directory("tf_shm_bridge"), "config", "tf_shm_bridge.yaml"
    )
    params_file = LaunchConfiguration("params_file")
    use_sim_time = LaunchConfiguration("use_sim_time")
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "params_file",
                default_value=default_params,
                description="YAML file with tf_shm_bridge parameters",
            ),
            DeclareLaunchArgument(
                "use_sim_time",
                default_value="false",
                description="Follow /clock (simulation, bag replay)",
            ),
            Node(
                package="tf_shm_bridge",
                executable="tf_shm_bridge",
                name="tf_shm_bridge",
                output="screen",
                parameters=[params_file, {"use_sim_time": use_sim_time}],
            ),
        ]
    )
