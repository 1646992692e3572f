"""Every binary of the workspace, [[bin]] and example alike, parses its options with clap: `--help`
prints a usage and exits 0 without starting anything, and an unknown option is a usage error
(exit status 2, no panic).

The list comes from `cargo metadata`, so a binary added later is checked too. Binaries linked
with r2r run in a loopback-only network namespace like every ROS process of the tests (the
test's own when pytest itself runs in the host's). Built here unless TF_SHM_E2E_NO_BUILD=1.
"""

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release"

# Words each binary's help must contain beyond clap's "Usage:" (its options and modes).
EXPECTED = {
    "tf_shm": ["echo", "lookup", "tree", "doctor", "--runtime-dir"],
    "tf_shm_bench": ["--rounds <N>", "--ms <MS>", "--queries <Q>", "--thread-secs <S>"],
    "tf_shm_test_peer": ["owner", "consumer", "hold", "write-probe", "join", "raw-hello"],
    "latency_probe": ["ingest", "latency"],
    "profile_lookup": ["[DEPTH]", "[LOOKUPS]", "exact", "time0"],
    "demo_arena": ["TF_SHM_RUNTIME_DIR"],
    "fanout_consumer": ["--pairs <PAIRS>", "--secs <S>", "--skip <S0>"],
    "fanout_listener": [
        "--pairs <PAIRS>",
        "--secs <S>",
        "--skip <S0>",
        "--name <NODE>",
        "--budget-mb <MB>",
    ],
    "fanout_publisher": ["--rate <HZ>"],
}


def targets():
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--no-deps", "--format-version", "1"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    out = []
    for pkg in meta["packages"]:
        for t in pkg["targets"]:
            if "bin" in t["kind"]:
                out.append(
                    (pkg["name"], t["name"], BIN / t["name"], t.get("required-features", []))
                )
            elif "example" in t["kind"]:
                out.append(
                    (
                        pkg["name"],
                        t["name"],
                        BIN / "examples" / t["name"],
                        t.get("required-features", []),
                    )
                )
    return out


TARGETS = targets()


@pytest.fixture(scope="module")
def built():
    if os.environ.get("TF_SHM_E2E_NO_BUILD") != "1":
        subprocess.run(
            ["cargo", "build", "-q", "--release", "--workspace", "--bins", "--examples"],
            cwd=ROOT,
            check=True,
            timeout=1800,
        )
        for pkg, name, _, features in TARGETS:
            if features:
                subprocess.run(
                    [
                        "cargo",
                        "build",
                        "-q",
                        "--release",
                        "-p",
                        pkg,
                        "--features",
                        ",".join(features),
                        "--bin",
                        name,
                    ],
                    cwd=ROOT,
                    check=True,
                    timeout=1800,
                )


def isolated():
    return [n for _, n in socket.if_nameindex()] == ["lo"]


def run(path, *args):
    prefix = [] if isolated() else ["unshare", "-n"]
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", NO_COLOR="1")
    return subprocess.run(
        prefix + [str(path), *args],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        check=False,
    )


def test_every_binary_is_listed():
    assert {name for _, name, _, _ in TARGETS} >= set(EXPECTED), TARGETS


@pytest.mark.parametrize("pkg,name,path,features", TARGETS, ids=[t[1] for t in TARGETS])
def test_help_and_usage_errors(built, pkg, name, path, features):
    assert os.access(path, os.X_OK), f"{path} not built"
    r = run(path, "--help")
    assert r.returncode == 0, f"{name} --help: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert "Usage:" in r.stdout and "-h, --help" in r.stdout, (
        f"{name} --help:\n{r.stdout}\n{r.stderr}"
    )
    for word in EXPECTED.get(name, []):
        assert word in r.stdout, f"{name} --help lacks {word!r}:\n{r.stdout}"
    if name == "tf_shm_bridge":
        return  # ROS arguments follow --ros-args; what it does with others is the bridge's own test
    r = run(path, "--no-such-option")
    assert r.returncode == 2, (
        f"{name} --no-such-option: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    )
    assert "unexpected argument '--no-such-option'" in r.stderr and "panicked" not in r.stderr, (
        r.stderr
    )
