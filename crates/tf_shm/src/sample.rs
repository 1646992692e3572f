//! The plain values every other module speaks: frame ids, one stored sample, one transform.

/// Index of a frame in the arena's frame table. `0` is tf2's "no parent" sentinel
/// (`CompactFrameID` 0); real frames are `1..frame_count`. Ids are never reused within an
/// arena's life, so a resolved id stays valid for that arena.
pub type FrameId = u32;

/// The "no frame" sentinel, as tf2's `CompactFrameID` 0.
pub const NO_FRAME: FrameId = 0;

/// A rigid transform: translation in metres, rotation as a quaternion `[x, y, z, w]`
/// (geometry_msgs order). Applied to a point `v` it gives `R(q)·v + p`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// `[x, y, z]`, metres.
    pub translation: [f64; 3],
    /// `[x, y, z, w]`.
    pub rotation: [f64; 4],
}

impl Transform {
    /// The identity transform.
    pub const IDENTITY: Transform = Transform {
        translation: [0.0; 3],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };
}

/// One sample of a frame's cache, as tf2's `TransformStorage`: the pose of the child frame in
/// `parent` at `stamp` (ns since the epoch of the data's clock).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Nanoseconds, signed, as `tf2::TimePoint`.
    pub stamp: i64,
    /// Parent frame of this sample (the parent is per sample, as in tf2).
    pub parent: FrameId,
    /// `T_parent_child`.
    pub transform: Transform,
}

/// A lookup's answer, shaped like `geometry_msgs/TransformStamped`: `header.frame_id` = target,
/// `child_frame_id` = source, `transform` = `T_target_source` (maps points in the source frame
/// into the target frame). Names borrow from the caller's arguments so a lookup allocates
/// nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransformStamped<'a> {
    /// As tf2 returns it: the requested time, or the latest common time for time 0 (ns).
    pub stamp: i64,
    /// Target frame (`header.frame_id`).
    pub frame_id: &'a str,
    /// Source frame (`child_frame_id`).
    pub child_frame_id: &'a str,
    /// `T_target_source`; rotation normalised and sign-canonicalised as ROS 2 does.
    pub transform: Transform,
}
