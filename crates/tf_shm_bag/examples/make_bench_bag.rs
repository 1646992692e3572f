//! Writes a synthetic rosbag2 MCAP file for the replay benchmark (scripts/bag_bench.sh):
//! a robot-shaped tree of 50 dynamic frames (a binary tree under `odom`) sent as one
//! TFMessage per 10 ms tick, 4 statics once, until N dynamic transforms; receive time = stamp
//! + 1 ms; zstd chunks as rosbag2 writes them.
//!
//!     cargo run --release -p tf_shm_bag --example make_bench_bag -- OUT.mcap N

use std::path::PathBuf;

use tf_shm_bag::msg::{Header, Quaternion, TfMessage, Time, Transform, TransformStamped, Vector3};
use tf_shm_bag::{BagWriter, Topics};

const FRAMES: usize = 50;
const TICK_NS: i64 = 10_000_000;
const BASE_NS: i64 = 1_700_000_000_000_000_000;

fn ts(parent: &str, child: &str, stamp: i64, x: f64, yaw: f64) -> TransformStamped {
    TransformStamped {
        header: Header {
            stamp: Time::from_ns(stamp),
            frame_id: parent.into(),
        },
        child_frame_id: child.into(),
        transform: Transform {
            translation: Vector3 { x, y: 0.1, z: 0.0 },
            rotation: Quaternion {
                x: 0.0,
                y: 0.0,
                z: (yaw / 2.0).sin(),
                w: (yaw / 2.0).cos(),
            },
        },
    }
}

/// Writes a synthetic rosbag2 MCAP file of robot-shaped TF for the replay benchmark.
#[derive(clap::Parser)]
#[command(name = "make_bench_bag")]
struct Args {
    /// The MCAP file to write
    out: PathBuf,
    /// Dynamic transforms to write
    transforms: u64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Args = clap::Parser::parse();
    let (out, n) = (args.out, args.transforms);
    let names: Vec<String> = (0..FRAMES).map(|i| format!("link_{i}")).collect();
    let parent = |i: usize| {
        if i == 0 {
            "odom".to_string()
        } else {
            names[(i - 1) / 2].clone()
        }
    };
    let mut bag = BagWriter::create(&out, &Topics::default())?;
    let statics = TfMessage {
        transforms: (0..4)
            .map(|i| ts("link_0", &format!("sensor_{i}"), BASE_NS, 0.2, 0.0))
            .collect(),
    };
    bag.write(true, (BASE_NS + 1_000_000) as u64, &statics)?;
    let mut written = 0u64;
    let mut k = 0i64;
    while written < n {
        let stamp = BASE_NS + k * TICK_NS;
        let t = k as f64 * 0.01;
        let msg = TfMessage {
            transforms: (0..FRAMES)
                .map(|i| {
                    ts(
                        &parent(i),
                        &names[i],
                        stamp,
                        0.5 + 0.1 * (t + i as f64).sin(),
                        t,
                    )
                })
                .collect(),
        };
        bag.write(false, (stamp + 1_000_000) as u64, &msg)?;
        written += FRAMES as u64;
        k += 1;
    }
    bag.finish()?;
    println!("{} dynamic transforms in {k} messages", written);
    Ok(())
}
