//! Frame listing (tf2's `_frameExists`, `_getFrameStrings`) through the arena view's frame
//! table; `tf_shm::Buffer` will answer these itself (`frame_exists`, `get_all_frame_names`).

use tf_shm::store::FrameStore;
use tf_shm::{ArenaError, Buffer};

/// tf2's `_frameExists`: the name is in the frame table (as a child or only as a parent).
pub(crate) fn frame_exists(buffer: &Buffer, name: &str) -> Result<bool, ArenaError> {
    Ok(buffer.view().frame_id(name)?.is_some())
}

/// tf2's `_getFrameStrings`: every frame name, by id (the order frames were first seen).
pub(crate) fn frame_names(buffer: &Buffer) -> Result<Vec<String>, ArenaError> {
    let view = buffer.view();
    let mut names = Vec::new();
    for id in 1..view.frame_count() {
        if let Some(n) = view.frame_name(id)? {
            names.push(n);
        }
    }
    Ok(names)
}
