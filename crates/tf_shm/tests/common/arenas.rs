//! Arenas for tests that must hold both ways a reader sees an arena: in-process, and through
//! a read-only mapping of an arena written here; and one way to store a sample.
// Each test file uses what it needs of this module.
#![allow(dead_code)]

use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaView, ArenaWriter};

/// Two empty arenas of `config`, each with its writer and a reader's view: `("in-process",
/// …)` and `("read-only mapping", …)` (a memfd arena named `name`, attached read-only).
pub fn in_process_and_mapped(
    config: &ArenaConfig,
    name: &str,
) -> Vec<(&'static str, ArenaView, ArenaWriter)> {
    let (w1, v1) = Arena::in_memory(config).unwrap();
    let shared = Arena::create_shared(config, name).unwrap();
    let v2 = Arena::attach(shared.reader_fd().unwrap()).unwrap();
    let (_file, w2, _) = shared.into_parts();
    vec![("in-process", v1, w1), ("read-only mapping", v2, w2)]
}

/// Stores `parent → child` at `stamp` ns: translation `[x, x / 2, -0.25]` m, a rotation of
/// `yaw` rad about z. Panics if tf2's rules refuse it.
pub fn put(
    w: &mut ArenaWriter,
    parent: &str,
    child: &str,
    stamp: i64,
    x: f64,
    yaw: f64,
    is_static: bool,
) {
    let (s, c) = (yaw / 2.0).sin_cos();
    w.set_transform(
        &TransformInput {
            frame_id: parent,
            child_frame_id: child,
            stamp,
            translation: [x, 0.5 * x, -0.25],
            rotation: [0.0, 0.0, s, c],
        },
        "test",
        is_static,
    )
    .expect("accepted");
}

/// A stamp and `T` (translation, then quaternion x, y, z, w) as bits, for exact comparison.
pub fn bits(stamp: i64, t: &tf_shm::Transform) -> (i64, [u64; 7]) {
    let mut b = [0u64; 7];
    for (o, v) in b
        .iter_mut()
        .zip(t.translation.iter().chain(t.rotation.iter()))
    {
        *o = v.to_bits();
    }
    (stamp, b)
}
