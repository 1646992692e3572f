"""Start tf_shm_bridge with config/tf_shm_bridge.yaml; what changes per robot is an argument.

    ros2 launch tf_shm_bridge tf_shm_bridge.launch.py [arena_name:=robot1] [namespace:=robot1]
        [domain:=N] [log_level:=debug] [params_file:=my.yaml] [use_sim_time:=true]

arena_name and domain, when given, win over the params file; left empty they come from it.
The bridge subscribes the relative names tf and tf_static (remapped from /tf and /tf_static, as
Nav2 does), so in a namespace it serves that robot's /<namespace>/tf; without one, /tf.
log_level is passed as `--ros-args --log-level`: a level, or LOGGER:=LEVEL for one logger.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from launch import LaunchDescription

ARGUMENTS = {
    "params_file": (None, "YAML file with tf_shm_bridge parameters (keyed /**)"),
    "arena_name": (
        "",
        (
            "Arena consumers open (TF_SHM_NAME); one per robot on a host. "
            'Empty: the params file\'s (default "default")'
        ),
    ),
    "domain": (
        "",
        (
            "Rendezvous domain of the arena; empty: the params file's "
            "(-1: $TF_SHM_DOMAIN, else $ROS_DOMAIN_ID, else 0)"
        ),
    ),
    "namespace": (
        "",
        ("Node namespace; the bridge then serves <namespace>/tf and <namespace>/tf_static"),
    ),
    "log_level": (
        "info",
        ("--ros-args --log-level value: debug, info, warn, error, fatal, or LOGGER:=LEVEL"),
    ),
    "use_sim_time": ("false", "Follow /clock (simulation, bag replay)"),
}


def _bridge(context):
    arg = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    # From the substitution, not its text: launch_ros converts the text to the type (YAML rules,
    # "true", "7"), and refuses what does not convert.
    overrides = {
        name: ParameterValue(LaunchConfiguration(name), value_type=kind)
        for name, kind in (("use_sim_time", bool), ("arena_name", str), ("domain", int))
        if arg[name] or name == "use_sim_time"
    }
    return [
        Node(
            package="tf_shm_bridge",
            executable="tf_shm_bridge",
            name="tf_shm_bridge",
            namespace=arg["namespace"] or None,
            output="screen",
            parameters=[arg["params_file"], overrides],
            remappings=[("/tf", "tf"), ("/tf_static", "tf_static")],
            ros_arguments=["--log-level", arg["log_level"]],
        )
    ]


def generate_launch_description():
    defaults = dict(ARGUMENTS)
    share = get_package_share_directory("tf_shm_bridge")
    defaults["params_file"] = (
        os.path.join(share, "config", "tf_shm_bridge.yaml"),
        ARGUMENTS["params_file"][1],
    )
    return LaunchDescription(
        [
            DeclareLaunchArgument(name, default_value=default, description=text)
            for name, (default, text) in defaults.items()
        ]
        + [OpaqueFunction(function=_bridge)]
    )
