//! The `tf2_frames` service (`tf2_msgs/srv/FrameGraph`) that a tf2_ros `Buffer` given a node
//! serves, answered from the arena: `ros2 run tf2_tools view_frames` (and `ros2 service call
//! tf2_frames`) get tf2's `allFramesAsYAML()` of the tree the bridge holds.
//!
//! As tf2_ros's Python `Buffer(node=…)` creates it: the relative name `tf2_frames` (so in the
//! node's namespace), the default services QoS, and the answer of `all_frames_as_yaml()` at
//! time zero (no `transform_delay` lines), as tf2_ros's `Buffer::getFrames` gives it.

use futures::{Stream, StreamExt};
use r2r::tf2_msgs::srv::FrameGraph;
use r2r::{QosProfile, ServiceRequest};
use tf_shm::ArenaView;

/// The service's name, relative to the node's namespace (tf2_ros's).
pub const NAME: &str = "tf2_frames";

/// Creates the service on `node` (before the node moves to the intake thread).
pub fn create(
    node: &mut r2r::Node,
) -> Result<impl Stream<Item = ServiceRequest<FrameGraph::Service>> + Unpin, String> {
    node.create_service::<FrameGraph::Service>(NAME, QosProfile::services_default())
        .map_err(|e| format!("cannot create the {NAME} service: {e}"))
}

/// Answers every request from `view` until the stream ends.
pub async fn serve(
    mut requests: impl Stream<Item = ServiceRequest<FrameGraph::Service>> + Unpin,
    view: ArenaView,
) {
    while let Some(req) = requests.next().await {
        let frame_yaml = view.all_frames_as_yaml(0).unwrap_or_else(|e| {
            tracing::warn!("{NAME}: cannot read the arena: {e}");
            String::new()
        });
        if let Err(e) = req.respond(FrameGraph::Response { frame_yaml }) {
            tracing::warn!("{NAME}: cannot answer: {e}");
        }
    }
}
