"""What ends a wait in tf_shm besides its condition. A process exits cleanly while its threads wait: CPython ends a daemon thread that
takes the GIL back during finalization with pthread_exit, which aborts the process when the
thread sleeps in Rust ("FATAL: exception not rethrown", status -6), as it does when data
arrives. tf_shm's exit hook ends every wait first; this runs a real process whose daemon
threads sleep in each kind of wait, woken by a writer process, when its main thread returns."""

import subprocess
import sys

WRITER = r"""
import sys, time
from tf_shm._testing import Arena

arena = Arena(sys.argv[1])
k = 0
while True:
    k += 1
    arena.set_transform("map", "odom", k * 1_000_000, (1.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    time.sleep(0.0005)
"""

SCRIPT = r"""
import sys, threading, time
import tf_shm

buffer = tf_shm.Buffer(open_timeout=10_000_000_000)
native = buffer._native
minute = 60_000_000_000
started = []

def waits(name, call):
    def run():
        started.append(name)
        call()
    threading.Thread(target=run, name=name, daemon=True).start()

# The listener's wake thread, a timed lookup and check, a future's wait, a wait for a bridge.
def data():
    token = native.data_token()
    while True:
        token = native.wait_for_data(token, 60.0) or token

waits("data", data)
waits("lookup", lambda: buffer.lookup_transform("map", "nowhere", 0, minute))
waits("can", lambda: buffer.can_transform("map", "nowhere", 0, minute))
future = buffer.wait_for_transform_async("map", "nowhere", 0)
waits("open", lambda: tf_shm.Buffer(name="no_bridge_serves", open_timeout=minute))
while len(started) < 4:
    time.sleep(0.01)
time.sleep(0.3)
assert not future.done()
print("waiting", flush=True)
"""


def test_exit_while_daemon_threads_wait_in_tf_shm_is_clean(runtime_dir):
    writer = subprocess.Popen([sys.executable, "-c", WRITER, runtime_dir])
    try:
        for _ in range(5):
            run = subprocess.run(
                [sys.executable, "-c", SCRIPT],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert run.returncode == 0, run.stdout + run.stderr
            assert run.stdout == "waiting\n"
            assert "FATAL" not in run.stderr, run.stderr
        assert writer.poll() is None, "the writer exited"
    finally:
        writer.kill()
        writer.wait()


CTRL_C = r"""
import sys, time
import tf_shm

buffer = tf_shm.Buffer(open_timeout=10_000_000_000)
minute = 60_000_000_000
print("waiting", flush=True)
start = time.monotonic()
try:
    if sys.argv[1] == "lookup":
        buffer.lookup_transform("map", "nowhere", 0, minute)
    elif sys.argv[1] == "can":
        buffer.can_transform("map", "nowhere", 0, minute)
    else:
        tf_shm.Buffer(name="no_bridge_serves", open_timeout=minute)
except KeyboardInterrupt:
    print(f"KeyboardInterrupt after {time.monotonic() - start:.1f} s", flush=True)
"""


def test_ctrl_c_ends_a_wait_on_the_main_thread(runtime_dir):
    """As tf2_ros's waits (a threading condition), a timed lookup, check or a wait for a first
    bridge on the main thread ends with KeyboardInterrupt when SIGINT arrives, here while
    the writer's samples wake it; without, it would sleep out its minute."""
    import signal
    import time

    writer = subprocess.Popen([sys.executable, "-c", WRITER, runtime_dir])
    try:
        for call in ("lookup", "can", "open"):
            node = subprocess.Popen(
                [sys.executable, "-c", CTRL_C, call],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            assert node.stdout.readline() == "waiting\n", node.stderr.read()
            time.sleep(0.5)
            node.send_signal(signal.SIGINT)
            out, err = node.communicate(timeout=20)
            assert node.returncode == 0, out + err
            assert out.startswith("KeyboardInterrupt after "), (call, out, err)
        assert writer.poll() is None, "the writer exited"
    finally:
        writer.kill()
        writer.wait()
