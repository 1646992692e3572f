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
pkgs=(python3-tf2 python3-geometry-msgs graphviz iproute2 libtf2-dev)
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

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings

step "Rust tests (library, differential against tf2, rendezvous, CLI, bridge)"
cargo test --workspace --release --no-fail-fast 2>&1 | tee target/rust-tests.log
# Summarise cargo's per-binary result lines into the one line CI reads.
awk '/^test result:/ {p += $4; f += $6} END {printf "rust: %d passed, %d failed\n", p, f}' \
  target/rust-tests.log

step "loom model of the ring protocol (preemption bound 2; crates/tf_shm/src/ring.rs)"
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom \
  cargo test -p tf_shm --release --lib ring::loom_model

step "ROS tests (tf2_msgs type hash, bridge faults: bursts, restarts, floods; PR2 end to end) in a loopback-only netns"
unshare -n bash -c 'ip link set lo up && exec python3 -m pytest -q tests/ros tests/e2e'
