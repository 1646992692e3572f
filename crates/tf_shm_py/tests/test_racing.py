"""Lookups from Python racing the writer answer from one moment (tf_shm's ``moment`` module: a
query reads one moment of the writer's history).

A writer *process* publishes messages as fast as it can (each one batch, as the bridge writes
a TFMessage) while this process loops over lookups on every Python read path, and every answer
is checked against what holds at every moment of the history:

- map -> odom -> base: each message moves odom and puts base back where it was, at one stamp,
  so T_map_base at time 0 is one constant at every moment; links read from two messages fail
  with an extrapolation or answer another transform.
- base <- base at time 0: the identity at every moment.
- a new frame pair p_j -> c_j (both new, one sample) in some messages: T_c_j_p_j at time 0 is
  the sample's inverse or "c_j does not exist"; "p_j does not exist" with c_j present, or any
  other error, is no moment's.
"""

import mmap
import os
import struct
import subprocess
import sys
import time

import pytest
from conftest import inverse, yaw_q

SECONDS = float(os.environ.get("TF_SHM_RACING_SECONDS", "3"))
C = ((0.3, -0.2, 0.1), yaw_q(0.7))
PAIRS, PAIR_EVERY = 100, 200

WRITER = r"""
import math, mmap, struct, sys
sys.path[:0] = [sys.argv[3]]
from conftest import compose, inverse, yaw_q
from tf_shm._testing import Arena

C = ((0.3, -0.2, 0.1), yaw_q(0.7))
PAIRS, PAIR_EVERY = int(sys.argv[4]), int(sys.argv[5])
arena = Arena(sys.argv[1])
with open(sys.argv[2], "r+b") as f:
    progress = mmap.mmap(f.fileno(), 32)
k = pairs = 0
while struct.unpack_from("<q", progress, 24)[0] == 0:
    k += 1
    a = 0.001 * (k % 5000)
    odom = ((math.cos(a), math.sin(a), 0.01 * a), yaw_q(a))
    base = compose(inverse(odom), C)
    stamp = 1_000_000_000_000 + k * 10_000_000
    items = [("map", "odom", stamp, *odom), ("odom", "base", stamp, *base)]
    if k % PAIR_EVERY == 0 and pairs < PAIRS:
        j = pairs
        items.append((f"p{j}", f"c{j}", stamp, (0.01 * j, 1.0, -0.5), yaw_q(0.02 * j)))
        pairs += 1
        struct.pack_into("<q", progress, 16, pairs)
    struct.pack_into("<q", progress, 0, k)
    arena.set_transforms(items)
    struct.pack_into("<q", progress, 8, k)
arena.close()
"""


def near(got, want, tol=1e-9):
    (t, q), (wt, wq) = got, want
    if any(abs(a - b) > tol for a, b in zip(t, wt)):
        return False
    return (
        min(max(abs(a - b) for a, b in zip(q, wq)), max(abs(a + b) for a, b in zip(q, wq))) <= tol
    )


def test_python_lookups_racing_the_writer_answer_from_one_moment(runtime_dir, tmp_path):
    import tf_shm

    path = tmp_path / "progress"
    path.write_bytes(bytes(32))
    with open(path, "r+b") as f:
        progress = mmap.mmap(f.fileno(), 32)

    def word(i):
        return struct.unpack_from("<q", progress, 8 * i)[0]

    tests_dir = os.path.dirname(os.path.abspath(__file__))
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            WRITER,
            runtime_dir,
            str(path),
            tests_dir,
            str(PAIRS),
            str(PAIR_EVERY),
        ]
    )
    try:
        deadline = time.monotonic() + 10
        while word(1) == 0:
            assert writer.poll() is None, "the writer exited"
            assert time.monotonic() < deadline, "the writer wrote nothing"
            time.sleep(0.001)
        buffer = tf_shm.Buffer(open_timeout=0)

        def by_name(target, source):
            r = buffer.lookup_transform(target, source, 0)
            return r.translation, r.rotation

        def by_tuple(target, source):
            r = buffer.lookup_transform_tuple(target, source, 0)
            return r[1:4], r[4:]

        def full(target, source):
            # Each half resolves time 0 on its own (tf2's two-time lookup); both in one moment.
            fixed = "odom" if target == "map" else source
            r = buffer.lookup_transform_full(target, 0, source, 0, fixed)
            return r.translation, r.rotation

        paths = {
            "lookup_transform": by_name,
            "lookup_transform_tuple": by_tuple,
            "lookup_transform_full": full,
        }
        bad, reads, racing = [], 0, 0
        identity = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
        end = time.monotonic() + SECONDS
        while time.monotonic() < end:
            for name, lookup in paths.items():
                lo = word(1)
                try:
                    got = lookup("map", "base")
                    if not near(got, C):
                        bad.append(f"{name}: map <- base at time 0 is no moment's: {got}")
                except tf_shm.TransformException as e:
                    bad.append(f"{name}: map <- base at time 0 failed: {e}")
                try:
                    got = lookup("base", "base")
                    if got != identity:
                        bad.append(f"{name}: base <- base is not the identity: {got}")
                except tf_shm.TransformException as e:
                    bad.append(f"{name}: base <- base failed: {e}")
                j = word(2) - 1
                if j >= 0:
                    want = inverse(((0.01 * j, 1.0, -0.5), yaw_q(0.02 * j)))
                    try:
                        got = lookup(f"c{j}", f"p{j}")
                        if not near(got, want):
                            bad.append(f"{name}: c{j} <- p{j} is no moment's: {got}")
                    except tf_shm.LookupException as e:
                        if f'"c{j}"' not in str(e) or f'"p{j}"' in str(e):
                            bad.append(f"{name}: c{j} <- p{j}: no moment's {type(e).__name__}: {e}")
                    except tf_shm.TransformException as e:
                        bad.append(f"{name}: c{j} <- p{j}: no moment's {type(e).__name__}: {e}")
                reads += 3
                racing += word(0) > lo
    finally:
        struct.pack_into("<q", progress, 24, 1)
        writer.wait(timeout=30)
    print(
        f"{reads} reads, {racing} rounds began while a message was being written, "
        f"{word(1)} messages, {word(2)} new frame pairs"
    )
    assert writer.returncode == 0
    assert not bad, f"{len(bad)} answers of no moment, e.g.:\n" + "\n".join(bad[:10])
    assert racing >= 100, f"only {racing} racing rounds: the test proved nothing"
    assert word(2) >= 3


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v", "-s"]))
