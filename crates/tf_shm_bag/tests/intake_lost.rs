//! A recording counts the messages the bridge received during it but could not store (its
//! intake queue full: `ArenaStats::messages_lost`), which are in no arena and so in no bag:
//! the first arena's losses from before the recording are not its, a restarted bridge's are.

use tf_shm::rendezvous::{Join, Serve};
use tf_shm::validate::TransformInput;
use tf_shm::{ArenaConfig, Owner};
use tf_shm_bag::{BagWriter, Recorder, Topics};

fn owner(dir: &std::path::Path) -> Owner {
    Serve::new(ArenaConfig {
        max_frames: 16,
        memory_budget_bytes: 1 << 20,
        ..ArenaConfig::default()
    })
    .runtime_dir(dir)
    .require_create(true)
    .serve()
    .expect("owner")
}

fn put(o: &mut Owner, stamp: i64) {
    let t = TransformInput {
        frame_id: "map",
        child_frame_id: "base",
        stamp,
        translation: [1.0, 0.0, 0.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };
    o.writer().set_transform(&t, "test", false).expect("write");
}

#[test]
fn messages_the_bridge_lost_during_the_recording_are_counted_across_a_restart() {
    let dir = std::env::temp_dir().join(format!("tfshm-intake-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut first = owner(&dir);
    // Lost before the recording began: not the recording's.
    first.writer().set_messages_lost(5);
    put(&mut first, 1_000_000_000);
    let buffer = Join::new().runtime_dir(&dir).open().expect("consumer");
    let topics = Topics {
        tf: "/tf".into(),
        tf_static: "/tf_static".into(),
        clock: None,
    };
    let bag = BagWriter::create(&dir.join("out.mcap"), &topics).unwrap();
    let mut rec = Recorder::new(bag);
    rec.poll_buffer(&buffer, 1).unwrap();
    assert_eq!(rec.intake_lost(), 0);
    first.writer().set_messages_lost(12);
    put(&mut first, 2_000_000_000);
    rec.poll_buffer(&buffer, 2).unwrap();
    assert_eq!(rec.intake_lost(), 7);

    // The bridge restarts: all the new one's losses happened during the recording.
    drop(first);
    let mut second = owner(&dir);
    second.writer().set_messages_lost(3);
    put(&mut second, 3_000_000_000);
    second.writer().declare_ready();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while rec.arenas < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the recording never followed the restart"
        );
        rec.poll_buffer(&buffer, 3).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(rec.intake_lost(), 10);
    rec.finish().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
