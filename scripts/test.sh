#!/usr/bin/env bash
# Every test of the project, from a fresh Debian 12 machine: installs what the tests need
# (Debian's tf2 as reference, the ROS 2 Jazzy environment), then checks formatting and lints
# and runs the Rust tests, the ROS tests and the end-to-end PR2 run.
# ROS processes only ever run in a loopback-only network namespace with
# ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST: no DDS traffic leaves the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s\n' "$*"; }

step "system packages"
pkgs=(python3-tf2 python3-geometry-msgs python3-venv graphviz iproute2 libtf2-dev
  # C ABI and C++ wrapper (crates/tf_shm_c): header generator, compilers with ASan/UBSan
  # runtimes, CMake, and orocos KDL as the reference of the geometry_msgs interop test.
  cbindgen gcc g++ clang libclang-rt-14-dev cmake liborocos-kdl-dev
  # `tf_shm view`'s page in a real headless browser (crates/tf_shm_cli/tests/view_browser.rs).
  chromium)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

step "ROS 2 Jazzy environment"
scripts/ros-env.sh setup
eval "$(scripts/ros-env.sh env)"
export CARGO_TERM_COLOR=never

step "reference MCAP tools (PyPI mcap, mcap-ros2-support) for the bag tests"
# A venv on Debian's python with its site packages, so one interpreter has the reference MCAP
# reader/writer and Debian's tf2 (crates/tf_shm_bag/tests/tools/bag_reference.py).
export TF_SHM_PY_TOOLS="${TF_SHM_PY_TOOLS:-$HOME/.cache/tf_shm/py-tools}"
if ! env -u PYTHONPATH "$TF_SHM_PY_TOOLS/bin/python3" -c 'import mcap_ros2, tf2_py' 2>/dev/null; then
  /usr/bin/python3 -m venv --system-site-packages "$TF_SHM_PY_TOOLS"
  env -u PYTHONPATH "$TF_SHM_PY_TOOLS/bin/pip" install -q 'mcap>=1.2' 'mcap-ros2-support>=0.5'
fi

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings

step "Rust tests (library, differential against tf2, rendezvous, CLI, bridge)"
cargo test --workspace --release --no-fail-fast 2>&1 | tee target/rust-tests.log
# Summarise cargo's per-binary result lines into the one line CI reads.
awk '/^test result:/ {p += $4; f += $6} END {printf "rust: %d passed, %d failed\n", p, f}' \
  target/rust-tests.log

step "C ABI and C++ wrapper: header freshness, C/C++ tests under ASan+UBSan (gcc, clang), CMake package, colcon example"
crates/tf_shm_c/tests/run.sh
crates/tf_shm_c/tests/packaging.sh

step "loom models of the ring and the one-moment protocols (preemption bound 2; crates/tf_shm/src/ring.rs, moment.rs)"
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
  cargo test -p tf_shm --release --lib loom_model

step "Python package tf_shm: wheel built from this tree with pip (maturin backend), ruff on all Python, pytest without ROS"
# The suite runs in a plain venv of Debian's Python: no rclpy, geometry_msgs or tf2_py, so the
# package's own result type and exception classes are tested here; the ROS suite has the rest.
PYB=$(scripts/py-wheel.sh)
# Every Python file of the repository (package, examples, launch files, scripts, reference
# programs, ROS and end-to-end tests), with the one configuration of ruff.toml.
"$PYB/bin/ruff" check .
"$PYB/bin/ruff" format --check .
(cd crates/tf_shm_py && env -u PYTHONPATH -u VIRTUAL_ENV -u AMENT_PREFIX_PATH \
  "$PYB/bin/python" -m pytest -q tests)
export PYTHONPATH="$PWD/target/py-site${PYTHONPATH:+:$PYTHONPATH}"

step "ROS tests (tf2_msgs type hash, the node's logging and package, bridge faults: bursts, restarts, floods; PR2 end to end through DDS, Python consumers, demo.sh, --help of every binary) in a loopback-only netns"
unshare -n bash -c 'ip link set lo up && exec python3 -m pytest -q tests/ros tests/e2e'
