//! A damaged or hostile arena yields errors, never a panic or undefined behaviour: random
//! corruptions of a real arena's bytes, attached read-only like a consumer would.

use std::io::{Read, Seek, SeekFrom, Write};

use rustix::fs::{MemfdFlags, SealFlags};
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, AttachError, FramePair};

const S: i64 = 1_000_000_000;

fn arena_bytes() -> Vec<u8> {
    let cfg = ArenaConfig {
        max_frames: 64,
        memory_budget_bytes: 256 << 10,
        ..ArenaConfig::default()
    };
    let mut shared = Arena::create_shared(&cfg, "tf_shm_damage").unwrap();
    let chain = ["map", "odom", "base", "arm", "hand"];
    for k in 0..40i64 {
        for pair in chain.windows(2) {
            let t = TransformInput {
                frame_id: pair[0],
                child_frame_id: pair[1],
                stamp: k * S / 10,
                translation: [k as f64, 1.0, 2.0],
                rotation: [0.0, 0.0, 0.0, 1.0],
            };
            shared.writer.set_transform(&t, "damage", false).unwrap();
        }
    }
    let st = TransformInput {
        frame_id: "hand",
        child_frame_id: "tool",
        stamp: 0,
        translation: [0.0, 0.0, 0.1],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };
    shared.writer.set_transform(&st, "damage", true).unwrap();
    let mut f = shared.file().try_clone().unwrap();
    let mut bytes = Vec::new();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.read_to_end(&mut bytes).unwrap();
    bytes
}

/// A sealed memfd holding `bytes`, as a consumer would receive it.
fn sealed(bytes: &[u8]) -> std::fs::File {
    let fd = rustix::fs::memfd_create(
        "tf_shm_damaged",
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )
    .unwrap();
    let mut f = std::fs::File::from(fd);
    f.write_all(bytes).unwrap();
    rustix::fs::fcntl_add_seals(&f, SealFlags::SHRINK | SealFlags::GROW).unwrap();
    f
}

fn exercise(view: &tf_shm::ArenaView) {
    let names = ["map", "odom", "base", "arm", "hand", "tool", "ghost"];
    for a in names {
        for b in names {
            let mut pair = FramePair::new(a, b);
            for t in [0, S, 2 * S + S / 20, 10 * S] {
                let _ = view.lookup_transform(a, b, t);
                let _ = view.can_transform(a, b, t);
            }
            // Twice each: the first call compiles the pair's path, the second reads through
            // it.
            for t in [0, 2 * S + S / 20] {
                let _ = view.lookup_pair(&mut pair, t);
                let _ = view.lookup_pair(&mut pair, t);
            }
            let _ = view.get_latest_common_time(a, b);
            let _ = view.lookup_transform_full(a, S, b, 2 * S, "map");
        }
    }
    let _ = view.all_frames_as_string();
    let _ = view.all_frames_as_yaml(0);
}

#[test]
fn intact_copy_attaches_and_answers() {
    let bytes = arena_bytes();
    let view = Arena::attach(sealed(&bytes)).unwrap();
    let t = view.lookup_transform("map", "tool", 2 * S).unwrap();
    assert!((t.transform.translation[0] - 80.0).abs() < 1e-9);
}

#[test]
fn header_damage_is_refused_naming_the_problem() {
    let bytes = arena_bytes();
    let mut bad = bytes.clone();
    bad[0] ^= 1;
    assert_eq!(
        Arena::attach(sealed(&bad)).err(),
        Some(AttachError::BadMagic)
    );
    let mut bad = bytes.clone();
    bad[8] = 99;
    assert!(matches!(
        Arena::attach(sealed(&bad)),
        Err(AttachError::VersionMismatch { found: 99, .. })
    ));
    let mut bad = bytes.clone();
    bad[16] ^= 0x40;
    assert!(matches!(
        Arena::attach(sealed(&bad)),
        Err(AttachError::LayoutMismatch { .. })
    ));
    let mut bad = bytes.clone();
    bad[120..128].copy_from_slice(&u64::MAX.to_le_bytes()); // pool_off
    assert_eq!(
        Arena::attach(sealed(&bad)).err(),
        Some(AttachError::Corrupt { field: "pool_off" })
    );
    let unsealed = {
        let fd = rustix::fs::memfd_create("x", MemfdFlags::CLOEXEC).unwrap();
        let mut f = std::fs::File::from(fd);
        f.write_all(&bytes).unwrap();
        f
    };
    assert!(matches!(Arena::attach(&unsealed), Err(AttachError::Io(_))));
}

/// Deterministic xorshift, so a failure reproduces.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_corruption_never_panics() {
    // A slot whose `seq` the damage left odd looks like a writer stuck mid-write: its read
    // fails at once (readers never wait for the writer) with a typed error.
    let bytes = arena_bytes();
    let used = bytes.iter().rposition(|&b| b != 0).unwrap() + 1;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut attached = 0;
    for _ in 0..1000 {
        let mut bad = bytes.clone();
        for _ in 0..1 + rng.next() % 8 {
            // Past the header (whose damage is refused at attach), into what is in use.
            let at = 4096 + (rng.next() as usize) % (used - 4096);
            let width = [1usize, 4, 8][(rng.next() % 3) as usize].min(bad.len() - at);
            let v = rng.next().to_le_bytes();
            bad[at..at + width].copy_from_slice(&v[..width]);
        }
        if let Ok(view) = Arena::attach(sealed(&bad)) {
            attached += 1;
            exercise(&view);
        }
    }
    assert!(
        attached > 830,
        "body damage must not be caught at attach: {attached}"
    );
}
