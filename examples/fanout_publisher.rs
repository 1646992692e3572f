//! Fan-out benchmark, TF source of both arms: a 50-frame tree at 100 Hz, published the way a C++
//! robot (robot_state_publisher, tf2_ros broadcasters) publishes it, from a compiled r2r node.
//!
//! * `/tf` (keep-last 100, reliable, volatile: tf2_ros's `DynamicBroadcasterQoS`): every tick
//!   ONE TFMessage with the 50 dynamic transforms `odom → link_01` and `link_{i/2} → link_i`
//!   (i = 2..50; a binary tree, depth up to 6), all stamped with the wall clock, small smooth
//!   rotations about z.
//! * `/tf_static` (keep-last 1, reliable, transient-local: `StaticBroadcasterQoS`): once at
//!   start, `sensor_0..3` under `link_50`, `link_41`, `link_33`, `link_26`.
//!
//!     fanout_publisher [--rate HZ]     # default 100
//!
//! Ticks are due at fixed times (a late tick does not shift the ones after it); runs until
//! SIGINT/SIGTERM. `scripts/fanout.sh` runs it.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Quaternion, Transform, TransformStamped, Vector3};
use r2r::std_msgs::msg::Header;
use r2r::tf2_msgs::msg::TFMessage;
use r2r::QosProfile;

const N_DYNAMIC: usize = 50;
const STATICS: [(&str, &str); 4] = [
    ("link_50", "sensor_0"),
    ("link_41", "sensor_1"),
    ("link_33", "sensor_2"),
    ("link_26", "sensor_3"),
];

fn name(i: usize) -> String {
    if i == 0 {
        "odom".to_string()
    } else {
        format!("link_{i:02}")
    }
}

/// `parent → child` translated by `xyz`, rotated by `yaw` about z.
fn tf(parent: String, child: String, xyz: [f64; 3], yaw: f64) -> TransformStamped {
    TransformStamped {
        header: Header {
            stamp: Time::default(),
            frame_id: parent,
        },
        child_frame_id: child,
        transform: Transform {
            translation: Vector3 {
                x: xyz[0],
                y: xyz[1],
                z: xyz[2],
            },
            rotation: yaw_quaternion(yaw),
        },
    }
}

fn yaw_quaternion(yaw: f64) -> Quaternion {
    Quaternion {
        x: 0.0,
        y: 0.0,
        z: (yaw / 2.0).sin(),
        w: (yaw / 2.0).cos(),
    }
}

fn wall_clock() -> Time {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Time {
        sec: d.as_secs() as i32,
        nanosec: d.subsec_nanos(),
    }
}

/// Fan-out benchmark, TF source of both arms: a 50-frame tree published from an r2r node as a
/// C++ robot publishes it (/tf every tick, /tf_static once), until SIGINT/SIGTERM.
#[derive(clap::Parser)]
#[command(name = "fanout_publisher")]
struct Args {
    /// Ticks per second
    #[arg(long, default_value_t = 100.0, value_name = "HZ")]
    rate: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { rate } = clap::Parser::parse();

    let ctx = r2r::Context::create()?;
    let mut node = r2r::Node::create(ctx, "fanout_publisher", "")?;
    let tf_qos = QosProfile::default().keep_last(100).reliable().volatile();
    let static_qos = QosProfile::default()
        .keep_last(1)
        .reliable()
        .transient_local();
    let publisher = node.create_publisher::<TFMessage>("/tf", tf_qos)?;
    let static_publisher = node.create_publisher::<TFMessage>("/tf_static", static_qos)?;

    let now = wall_clock();
    let mut statics = TFMessage {
        transforms: STATICS
            .iter()
            .map(|(p, c)| tf(p.to_string(), c.to_string(), [0.05, 0.0, 0.1], 0.0))
            .collect(),
    };
    for t in &mut statics.transforms {
        t.header.stamp = now.clone();
    }
    static_publisher.publish(&statics)?;

    // link_01's parent is name(1 / 2) = odom.
    let mut msg = TFMessage {
        transforms: (1..=N_DYNAMIC)
            .map(|i| tf(name(i / 2), name(i), [0.1, 0.05 * (i % 3) as f64, 0.2], 0.0))
            .collect(),
    };
    let period = Duration::from_secs_f64(1.0 / rate);
    let mut due = Instant::now();
    let mut k = 0u64;
    loop {
        let stamp = wall_clock();
        for (i, t) in msg.transforms.iter_mut().enumerate() {
            t.header.stamp = stamp.clone();
            t.transform.rotation = yaw_quaternion(0.3 * (0.01 * k as f64 + i as f64).sin());
        }
        publisher.publish(&msg)?;
        k += 1;
        due += period;
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
    }
}
