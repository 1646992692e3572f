//! Test bags written by the reference MCAP tools (`tools/bag_reference.py` in the py-tools
//! venv scripts/test.sh makes: PyPI's `mcap` and `mcap-ros2-support` beside Debian's tf2), and
//! tf2's answers for them. Generated once per test binary; a missing tool fails the test with
//! a hint (it never skips).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const HINT: &str = "make the py-tools venv as scripts/test.sh does: /usr/bin/python3 -m venv \
                    --system-site-packages ~/.cache/tf_shm/py-tools && ~/.cache/tf_shm/py-tools/\
                    bin/pip install mcap mcap-ros2-support (and apt-get install python3-tf2 \
                    python3-geometry-msgs), or set TF_SHM_PY_TOOLS to such a venv";

/// The py-tools venv's interpreter.
pub fn python() -> PathBuf {
    let dir = std::env::var_os("TF_SHM_PY_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/tf_shm/py-tools")
        });
    let py = dir.join("bin/python3");
    assert!(py.exists(), "no {}: {HINT}", py.display());
    py
}

/// The PR2 URDF (example-robot-data, in the ROS env: $TF_SHM_PR2_URDF).
fn urdf() -> PathBuf {
    if let Some(p) = std::env::var_os("TF_SHM_PR2_URDF") {
        return PathBuf::from(p);
    }
    let p = PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(
        ".cache/tf_shm/ros-jazzy/venv/lib/python3.11/site-packages/cmeel.prefix/share/\
         example-robot-data/robots/pr2_description/urdf/pr2.urdf",
    );
    assert!(
        p.exists(),
        "no PR2 URDF: set TF_SHM_PR2_URDF (eval \"$(scripts/ros-env.sh env)\")"
    );
    p
}

/// Runs the venv's Python on `args`, without the ROS env's PYTHONPATH (its ROS 2 message
/// packages would shadow Debian's ROS 1 ones tf2_py needs).
pub fn run_python(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let out = Command::new(python())
        .args(args)
        .env_remove("PYTHONPATH")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the py-tools python: {e}; {HINT}"));
    assert!(
        out.status.success(),
        "python {:?} failed ({}):\n{}\n{}\n{HINT}",
        args,
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The directory of generated bags and `expect.json`.
pub fn bags() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "tf_shm_bags_{}_{}",
            env!("CARGO_CRATE_NAME"),
            std::process::id()
        ));
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tf_shm_bag/tests/tools/bag_reference.py");
        run_python(&[
            script.as_os_str(),
            "--urdf".as_ref(),
            urdf().as_os_str(),
            "--out".as_ref(),
            dir.as_os_str(),
        ]);
        dir
    })
}

/// One bag of [`bags`].
pub fn bag(name: &str) -> PathBuf {
    bags().join(name)
}

/// A reference query and tf2's answer.
pub struct Case {
    pub target: String,
    pub source: String,
    pub time: i64,
    /// `Ok((stamp, translation, rotation))` or the tf2 exception class name.
    pub answer: Result<(i64, [f64; 3], [f64; 4]), String>,
}

/// The queries of `expect.json` (the PR2 bags).
pub fn cases() -> Vec<Case> {
    cases_of("expect.json")
}

/// The queries of one expectation file of [`bags`] (`expect_reset.json`: the reset bag as a
/// `use_sim_time` tf2_ros node holds it).
pub fn cases_of(file: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(bags().join(file)).expect(file);
    let v: serde_json::Value = serde_json::from_str(&text).expect("expect.json parses");
    let qs = v["queries"].as_array().expect("queries");
    let ans = v["answers"].as_array().expect("answers");
    assert_eq!(qs.len(), ans.len());
    let f = |x: &serde_json::Value| x.as_f64().expect("number");
    qs.iter()
        .zip(ans)
        .map(|(q, a)| Case {
            target: q[0].as_str().unwrap().to_string(),
            source: q[1].as_str().unwrap().to_string(),
            time: q[2].as_i64().unwrap(),
            answer: match a.get("e") {
                Some(e) => Err(e.as_str().unwrap().to_string()),
                None => Ok((
                    a["s"].as_i64().expect("stamp"),
                    [f(&a["t"][0]), f(&a["t"][1]), f(&a["t"][2])],
                    [f(&a["q"][0]), f(&a["q"][1]), f(&a["q"][2]), f(&a["q"][3])],
                )),
            },
        })
        .collect()
}

/// Compares one lookup with tf2's answer (≤ 1e-9; quaternions up to sign); `None` when equal,
/// else what differs.
pub fn check(
    case: &Case,
    got: Result<tf_shm::TransformStamped<'_>, tf_shm::TransformError>,
) -> Option<String> {
    let what = format!("{} <- {} at {}", case.target, case.source, case.time);
    match (&case.answer, got) {
        (Ok((stamp, t, q)), Ok(r)) => {
            let dt = (0..3)
                .map(|i| (t[i] - r.transform.translation[i]).abs())
                .fold(0.0, f64::max);
            let rq = r.transform.rotation;
            let same = (0..4).map(|i| (q[i] - rq[i]).abs()).fold(0.0, f64::max);
            let flip = (0..4).map(|i| (q[i] + rq[i]).abs()).fold(0.0, f64::max);
            let dq = same.min(flip);
            if dt > 1e-9 || dq > 1e-9 || r.stamp != *stamp {
                Some(format!(
                    "{what}: tf2 stamp {stamp} t {t:?} q {q:?}, got stamp {} t {:?} q {:?}",
                    r.stamp, r.transform.translation, rq
                ))
            } else {
                None
            }
        }
        (Err(class), Err(e)) => {
            let ours = match e {
                tf_shm::TransformError::Lookup(_) => "LookupException",
                tf_shm::TransformError::Connectivity(_) => "ConnectivityException",
                tf_shm::TransformError::Extrapolation { .. } => "ExtrapolationException",
                tf_shm::TransformError::InvalidArgument(_) => "InvalidArgumentException",
                _ => "other",
            };
            (ours != class).then(|| format!("{what}: tf2 {class}, got {e}"))
        }
        (Ok(_), Err(e)) => Some(format!("{what}: tf2 answered, got {e}")),
        (Err(class), Ok(_)) => Some(format!("{what}: tf2 {class}, got an answer")),
    }
}
