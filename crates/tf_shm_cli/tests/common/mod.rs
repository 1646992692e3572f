//! Shared by the CLI tests: an arena owned in-process in a runtime dir of its own, a known
//! tree, and running the built `tf_shm` against it.
#![allow(dead_code)]

pub mod running;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

use tf_shm::rendezvous::{Owner, Serve};
use tf_shm::validate::TransformInput;
use tf_shm::ArenaConfig;

/// A runtime dir of its own (short: socket paths must fit in 108 bytes), removed on drop.
pub struct TestDir(pub PathBuf);

impl TestDir {
    pub fn new(tag: &str) -> TestDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = PathBuf::from(format!(
            "/tmp/tfcli-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        TestDir(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The built `tf_shm`, pointed at this dir, with a clean environment for discovery.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tf_shm"));
        c.env("TF_SHM_RUNTIME_DIR", &self.0)
            .env_remove("TF_SHM_DOMAIN")
            .env_remove("ROS_DOMAIN_ID")
            .env_remove("TF_SHM_NAME")
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("COLUMNS")
            .args(args);
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run(self.cmd(args).output().expect("run tf_shm"))
    }

    /// An owner (the bridge's side) of this dir's default arena.
    pub fn owner(&self, config: ArenaConfig) -> Owner {
        Serve::new(config)
            .runtime_dir(&self.0)
            .require_create(true)
            .participant_name("test_bridge")
            .serve()
            .expect("create the test arena")
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o700));
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A finished run.
pub struct Run(pub Output);

impl Run {
    pub fn code(&self) -> i32 {
        self.0.status.code().expect("exited")
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout().trim())
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout()))
    }
    /// Fails the test with both streams unless the exit status is `code`.
    pub fn expect(self, code: i32) -> Run {
        assert_eq!(
            self.code(),
            code,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout(),
            self.stderr()
        );
        self
    }
}

pub fn small_config() -> ArenaConfig {
    ArenaConfig {
        memory_budget_bytes: 4 << 20,
        max_frames: 64,
        ..ArenaConfig::default()
    }
}

/// Quaternion of a rotation of `angle` rad about the unit `axis`.
pub fn quat(axis: [f64; 3], angle: f64) -> [f64; 4] {
    let (s, c) = (angle / 2.0).sin_cos();
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}

pub fn set(
    owner: &mut Owner,
    parent: &str,
    child: &str,
    stamp: i64,
    t: [f64; 3],
    q: [f64; 4],
    is_static: bool,
) {
    owner
        .writer()
        .set_transform(
            &TransformInput {
                frame_id: parent,
                child_frame_id: child,
                stamp,
                translation: t,
                rotation: q,
            },
            "test_pub",
            is_static,
        )
        .expect("stored");
}

pub const S: i64 = 1_000_000_000;

/// The known tree: `map → odom` (dynamic, 10 samples at 10 Hz from 1.0 s, x = 0.1·i m),
/// `odom → base_link` (dynamic, same stamps, [1, 2, 0] m, yaw 90°), `base_link → laser`
/// (static, [0.2, 0, 0.1] m, yaw 30°).
pub fn known_tree(owner: &mut Owner) {
    for i in 0..10 {
        let stamp = S + i * S / 10;
        set(
            owner,
            "map",
            "odom",
            stamp,
            [0.1 * i as f64, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
            false,
        );
        set(
            owner,
            "odom",
            "base_link",
            stamp,
            [1.0, 2.0, 0.0],
            quat([0.0, 0.0, 1.0], std::f64::consts::FRAC_PI_2),
            false,
        );
    }
    set(
        owner,
        "base_link",
        "laser",
        0,
        [0.2, 0.0, 0.1],
        quat([0.0, 0.0, 1.0], 30f64.to_radians()),
        true,
    );
}

pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

pub fn f64s(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}
