//! A writer SIGKILLed anywhere leaves readers answering from its last complete moment, forever,
//! without waiting (`crate::moment`: readers read whichever of the arena's two copies the latch
//! names as whole).
//!
//! The writer is a real process (this test binary run again, as the arena's owner with
//! `Serve`) that makes moments back to back, each one batch as the bridge makes one per
//! received `TFMessage`: every link of a chain `map → l1 → … → l8` at the moment's stamp with
//! translation `x = k` (the moment's number), a static link re-published with `x = k`, and,
//! every 16th moment, a new frame. The test process joins the arena (`Join`), lets the writer
//! run for a random while, SIGKILLs it — which lands inside a moment nearly every time, since
//! the writer never pauses — and then reads: every link of the chain, the whole chain at time
//! 0 and at the newest stamp, the static link and the frame listing must all be of one moment
//! `k` (each link `x = k`, the chain `x = 8k`, the frames it created listed), and the same `k`
//! on every read after the kill.
//! Twenty kills, each of a new writer.
//!
//! Without the latch (one copy, readers validating against a moment counter) a reader after
//! such a kill either waits for a moment that never ends or, past a deadline, answers from a
//! half-written one.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tf_shm::rendezvous::{Join, Serve};
use tf_shm::validate::TransformInput;
use tf_shm::{ArenaConfig, ArenaView};

const ROLE: &str = "TF_SHM_KILLED_WRITER_DIR";
const TEST: &str = "a_killed_writer_leaves_its_last_complete_moment_forever";
const LINKS: usize = 8;
const T0: i64 = 1_000_000_000_000;
const P: i64 = 1_000_000;
/// Frames the writer creates, one every 16th moment.
const EXTRAS: u64 = 64;

fn frame(i: usize) -> String {
    if i == 0 {
        "map".into()
    } else {
        format!("l{i}")
    }
}

fn config() -> ArenaConfig {
    ArenaConfig {
        max_frames: 4096,
        memory_budget_bytes: 32 << 20,
        ..ArenaConfig::default()
    }
}

/// The writer process: moments back to back until it is killed.
fn writer(dir: &Path) {
    let mut owner = Serve::new(config())
        .runtime_dir(dir)
        .require_create(true)
        .serve()
        .expect("serve the arena");
    let names: Vec<String> = (0..=LINKS).map(frame).collect();
    for k in 1u64.. {
        let x = k as f64;
        let stamp = T0 + k as i64 * P;
        let extra = format!("n{k}");
        owner.writer().batch(|w| {
            let mut put = |parent: &str, child: &str, stamp: i64, is_static: bool| {
                w.set_transform(
                    &TransformInput {
                        frame_id: parent,
                        child_frame_id: child,
                        stamp,
                        translation: [x, 0.0, 0.0],
                        rotation: [0.0, 0.0, 0.0, 1.0],
                    },
                    "killed_writer",
                    is_static,
                )
                .expect("stored");
            };
            for i in 0..LINKS {
                put(&names[i], &names[i + 1], stamp, false);
            }
            put("map", "fixed", 0, true);
            if k % 16 == 0 && k / 16 <= EXTRAS {
                put("map", &extra, stamp, false);
            }
        });
    }
}

fn spawn_writer(dir: &Path) -> Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(ROLE, dir)
        .env_remove("TF_SHM_DOMAIN")
        .env_remove("ROS_DOMAIN_ID")
        .env_remove("TF_SHM_NAME")
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn the writer")
}

/// The one moment every answer of `v` belongs to; panics naming the answer that mixes two.
fn moment_of(v: &ArenaView) -> u64 {
    let mut ks = Vec::new();
    let mut note = |what: &str, x: f64, per: f64| {
        let k = x / per;
        assert!(
            k.fract() == 0.0 && k >= 1.0,
            "{what}: x = {x}, of no moment"
        );
        ks.push((what.to_string(), k as u64));
    };
    let top = frame(LINKS);
    for i in 0..LINKS {
        let (parent, child) = (frame(i), frame(i + 1));
        let t = v.lookup_transform(&parent, &child, 0).expect("a link");
        note(&format!("link {i}"), t.transform.translation[0], 1.0);
    }
    let chain = v.lookup_transform("map", &top, 0).expect("the chain");
    note(
        "chain at time 0",
        chain.transform.translation[0],
        LINKS as f64,
    );
    let at = v
        .lookup_transform("map", &top, chain.stamp)
        .expect("the chain at its newest stamp");
    note(
        "chain at its stamp",
        at.transform.translation[0],
        LINKS as f64,
    );
    let fixed = v
        .lookup_transform("map", "fixed", 0)
        .expect("the static link");
    note("static link", fixed.transform.translation[0], 1.0);
    let k = ks[0].1;
    assert!(
        ks.iter().all(|(_, kk)| *kk == k),
        "answers of more than one moment: {ks:?}"
    );
    assert_eq!(chain.stamp, T0 + k as i64 * P, "the chain's stamp");
    // The listing holds exactly the frames moment k created.
    let listing = v.all_frames_as_string().expect("listing");
    let extras = listing.matches("Frame n").count() as u64;
    assert_eq!(
        extras,
        (k / 16).min(EXTRAS),
        "frames created by moment {k}:\n{listing}"
    );
    k
}

#[test]
fn a_killed_writer_leaves_its_last_complete_moment_forever() {
    if let Some(dir) = std::env::var_os(ROLE) {
        writer(Path::new(&dir));
        return;
    }
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("killed-writer-{}", std::process::id()));
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for kill in 0..20 {
        let dir = base.join(kill.to_string());
        std::fs::create_dir_all(&dir).expect("runtime dir");
        let mut child = spawn_writer(&dir);
        let join = Join::new()
            .runtime_dir(&dir)
            .participant_name("reader")
            .timeout(Duration::from_secs(30));
        let started = std::time::Instant::now();
        let buffer = loop {
            match join.open() {
                Ok(b) => break b,
                Err(e) if started.elapsed() > Duration::from_secs(30) => {
                    panic!("the writer never served: {e}")
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        let view = buffer.view();
        // Until the writer has made a few moments, then a random while more.
        while view.lookup_transform("map", "fixed", 0).is_err() {
            std::thread::sleep(Duration::from_millis(1));
        }
        // One query is one moment; separate ones of a live writer are of different moments.
        let top = frame(LINKS);
        let chain = view.lookup_transform("map", &top, 0).expect("the chain");
        let before = (chain.transform.translation[0] / LINKS as f64) as u64;
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(500 + seed % 20_000));
        child.kill().expect("SIGKILL the writer");
        child.wait().expect("reap the writer");
        let last = moment_of(&view);
        assert!(last >= before, "moment {last} after {before}");
        for _ in 0..200 {
            assert_eq!(moment_of(&view), last, "kill {kill}: the answers moved");
        }
        eprintln!("kill {kill}: readers answer moment {last} (first read at {before})");
    }
    let _ = std::fs::remove_dir_all(&base);
}
