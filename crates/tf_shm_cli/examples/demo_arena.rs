//! A stand-in for `tf_shm_bridge` with no ROS: owns the arena of this domain and publishes a
//! small robot (static `map → odom`, `odom → base_link` circling at 50 Hz, static sensors)
//! until interrupted, so `tf_shm tree`, `echo`, `monitor` and `doctor` have something to show.
//!
//! ```text
//! cargo run -p tf_shm_cli --example demo_arena &
//! tf_shm tree
//! tf_shm echo map laser
//! ```

use std::time::Duration;

use tf_shm::rendezvous::Serve;
use tf_shm::time::unix_now_ns;
use tf_shm::validate::TransformInput;
use tf_shm::ArenaConfig;

fn yaw(angle: f64) -> [f64; 4] {
    [0.0, 0.0, (angle / 2.0).sin(), (angle / 2.0).cos()]
}

/// A stand-in for tf_shm_bridge with no ROS: owns the arena of this domain (found as
/// tf_shm::open() finds it: $TF_SHM_RUNTIME_DIR, $TF_SHM_DOMAIN / $ROS_DOMAIN_ID, $TF_SHM_NAME)
/// and publishes a small robot until interrupted: static map → odom, odom → base_link circling at
/// 50 Hz, static camera and laser.
#[derive(clap::Parser)]
#[command(name = "demo_arena")]
struct Args {}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args {} = clap::Parser::parse();
    let mut owner = Serve::new(ArenaConfig {
        memory_budget_bytes: 8 << 20,
        ..ArenaConfig::default()
    })
    .participant_name("demo_arena")
    .serve()?;
    eprintln!("demo_arena: serving {}", owner.location());
    let mut put =
        |parent: &str, child: &str, stamp: i64, t: [f64; 3], q: [f64; 4], is_static: bool| {
            let input = TransformInput {
                frame_id: parent,
                child_frame_id: child,
                stamp,
                translation: t,
                rotation: q,
            };
            if let Err(e) = owner
                .writer()
                .set_transform(&input, "demo_arena", is_static)
            {
                eprintln!("demo_arena: {e}");
            }
        };
    let now = unix_now_ns();
    put("map", "odom", now, [2.0, 1.0, 0.0], yaw(0.0), true);
    put("base_link", "laser", now, [0.2, 0.0, 0.15], yaw(0.0), true);
    put(
        "base_link",
        "camera",
        now,
        [0.1, 0.0, 0.3],
        yaw(std::f64::consts::FRAC_PI_6),
        true,
    );
    loop {
        let stamp = unix_now_ns();
        let a = stamp as f64 / 1e9 * 0.5;
        put(
            "odom",
            "base_link",
            stamp,
            [a.cos(), a.sin(), 0.0],
            yaw(a + std::f64::consts::FRAC_PI_2),
            false,
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
