//! Fan-out benchmark, arm A: one consumer process as tf2_ros's listeners work today.
//!
//! An r2r node subscribes `/tf` (keep-last 100, reliable, volatile) and `/tf_static`
//! (keep-last 100, reliable, transient-local), deserialises every message and applies every
//! transform to its own private buffer (an in-process `tf_shm::Arena::in_memory` with the
//! bridge's default configuration, written through `ArenaWriter::set_transform`: the same tf2
//! rules as the bridge), and looks up the given frame pairs at time 0 at 100 Hz, exactly as
//! `fanout_consumer` does through the shared arena. One thread, as lean as a listener gets.
//!
//!     fanout_listener --pairs odom:link_50,sensor_0:sensor_1 [--secs S] [--skip S0]
//!         [--name NODE] [--budget-mb MB]
//!
//! The private arena holds 256 frames in MB MiB (default 16: the 10 s cache of this workload
//! without history cuts). Exits after S seconds (default 60) and prints one JSON line on stderr:
//! lookups that succeeded and failed after the first S0 seconds (default 0), messages and
//! transforms received, samples refused or stored with a cut history. `scripts/fanout.sh` runs it.

mod common;

use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};
use r2r::tf2_msgs::msg::TFMessage;
use r2r::QosProfile;
use tf_shm::validate::TransformInput;
use tf_shm::{Arena, ArenaConfig, ArenaWriter, WriteStatus};

use common::{parse_pairs, Tally, Window};

/// What tf2_ros's C++ `TransformListener` passes as authority.
const AUTHORITY: &str = "Authority undetectable";

#[derive(Default)]
struct Counts {
    msgs: u64,
    transforms: u64,
    refused: u64,
    history_cut: u64,
}

fn ingest(writer: &mut ArenaWriter, msg: &TFMessage, is_static: bool, c: &mut Counts) {
    c.msgs += 1;
    for t in &msg.transforms {
        let (p, q) = (&t.transform.translation, &t.transform.rotation);
        let stamp =
            i64::from(t.header.stamp.sec) * 1_000_000_000 + i64::from(t.header.stamp.nanosec);
        let input = TransformInput {
            frame_id: &t.header.frame_id,
            child_frame_id: &t.child_frame_id,
            stamp,
            translation: [p.x, p.y, p.z],
            rotation: [q.x, q.y, q.z, q.w],
        };
        c.transforms += 1;
        match writer.set_transform(&input, AUTHORITY, is_static) {
            Ok(WriteStatus::Stored | WriteStatus::DuplicateDropped) => {}
            Ok(WriteStatus::StoredHistoryCut) => c.history_cut += 1,
            Ok(WriteStatus::DroppedHistoryFull) | Err(_) => c.refused += 1,
        }
    }
}

/// Fan-out benchmark, arm A: one r2r node as tf2_ros's listeners work (its own /tf and
/// /tf_static subscriptions and private buffer), looking up the given frame pairs at time 0 at
/// 100 Hz; prints one JSON line on stderr when done.
#[derive(clap::Parser)]
#[command(name = "fanout_listener")]
struct Args {
    #[command(flatten)]
    window: Window,
    /// ROS node name [default: fanout_listener_<pid>]
    #[arg(long, value_name = "NODE")]
    name: Option<String>,
    /// Memory budget of the private buffer, MiB
    #[arg(long, default_value_t = 16, value_name = "MB")]
    budget_mb: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Args = clap::Parser::parse();
    let Window { pairs, secs, skip } = args.window;
    let budget_mb = args.budget_mb;
    let name = args
        .name
        .unwrap_or_else(|| format!("fanout_listener_{}", std::process::id()));
    let mut pairs = parse_pairs(&pairs, "fanout_listener");

    let ctx = r2r::Context::create()?;
    let mut node = r2r::Node::create(ctx, &name, "")?;
    let tf_qos = QosProfile::default().keep_last(100).reliable().volatile();
    let static_qos = QosProfile::default()
        .keep_last(100)
        .reliable()
        .transient_local();
    let mut tf = node.subscribe::<TFMessage>("/tf", tf_qos)?;
    let mut tf_static = node.subscribe::<TFMessage>("/tf_static", static_qos)?;
    // Sized for this workload (tf2's own buffer grows with the data): a heap arena is resident
    // in full, so the bridge's default 64 MiB would overstate arm A's memory.
    let config = ArenaConfig {
        max_frames: 256,
        memory_budget_bytes: budget_mb << 20,
        ..ArenaConfig::default()
    };
    let (mut writer, view) = Arena::in_memory(&config)?;

    let period = Duration::from_millis(10);
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut next = start + period;
    let count_from = start + Duration::from_secs_f64(skip);
    let mut tally = Tally::default();
    let mut c = Counts::default();
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        if now >= next {
            for pair in pairs.iter_mut() {
                let r = view.lookup_pair(pair, 0);
                if now >= count_from {
                    tally.record(pair, r);
                }
            }
            next += period;
            if next < now {
                next = now + period;
            }
            continue;
        }
        node.spin_once(next - now);
        while let Some(Some(msg)) = tf_static.next().now_or_never() {
            ingest(&mut writer, &msg, true, &mut c);
        }
        while let Some(Some(msg)) = tf.next().now_or_never() {
            ingest(&mut writer, &msg, false, &mut c);
        }
    }
    eprintln!(
        "{{\"arm\":\"A\",\"lookups_ok\":{},\"lookups_err\":{},\"msgs\":{},\"transforms\":{},\"refused\":{},\"history_cut\":{},\"sink\":{},\"first_err\":{:?}}}",
        tally.ok,
        tally.err,
        c.msgs,
        c.transforms,
        c.refused,
        c.history_cut,
        tally.sink.is_finite(),
        tally.first_err
    );
    Ok(())
}
