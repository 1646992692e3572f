"""A tf2_ros tutorial listener, reading TF from tf_shm's arena: only the import differs.

Looks up ``T_target_source`` once a second and logs it. Run it next to a tf_shm_bridge (e.g.
scripts/demo.sh's PR2), in the project's ROS environment with the tf_shm package installed::

    python3 examples/python/tf_shm_listener.py --ros-args \\
        -p target_frame:=map -p source_frame:=r_gripper_tool_frame
"""

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

# With tf2_ros this line is: from tf2_ros import Buffer, TransformException, TransformListener
from tf_shm import Buffer, TransformException, TransformListener


class FrameListener(Node):
    def __init__(self):
        super().__init__("tf_shm_frame_listener")
        self.target_frame = (
            self.declare_parameter("target_frame", "map").get_parameter_value().string_value
        )
        self.source_frame = (
            self.declare_parameter("source_frame", "r_gripper_tool_frame")
            .get_parameter_value()
            .string_value
        )
        self.tf_buffer = Buffer()
        self.tf_listener = TransformListener(self.tf_buffer, self)
        self.timer = self.create_timer(1.0, self.on_timer)

    def on_timer(self):
        try:
            t = self.tf_buffer.lookup_transform(
                self.target_frame, self.source_frame, rclpy.time.Time()
            )
        except TransformException as ex:
            self.get_logger().info(
                f"Could not transform {self.source_frame} to {self.target_frame}: {ex}"
            )
            return
        p, q = t.transform.translation, t.transform.rotation
        self.get_logger().info(
            f"T_{self.target_frame}_{self.source_frame} at {t.header.stamp.sec}."
            f"{t.header.stamp.nanosec:09d}: translation ({p.x:.3f}, {p.y:.3f}, {p.z:.3f}) m, "
            f"rotation ({q.x:.3f}, {q.y:.3f}, {q.z:.3f}, {q.w:.3f})"
        )


def main():
    rclpy.init()
    node = FrameListener()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
