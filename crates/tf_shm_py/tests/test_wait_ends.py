"""What ends a wait in tf_shm besides its condition. A process exits cleanly while its threads
wait: CPython ends a daemon thread that takes the GIL back during finalization with
pthread_exit, which aborts the process when the thread sleeps in Rust ("FATAL: exception not
rethrown", status -6), as it does when data arrives. tf_shm's exit hook lets only the waits
already on their way back take the GIL; one that ends later parks its thread. These run real
processes whose daemon threads sleep in each kind of wait, woken by a writer process, when
their main thread returns; Ctrl-C on the main thread, also in a forked child."""

import subprocess
import sys

from processes import python

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


def test_exit_while_daemon_threads_wait_in_tf_shm_is_clean(writer):
    for _ in range(5):
        run = python(SCRIPT)
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stdout == "waiting\n"
        assert "FATAL" not in run.stderr, run.stderr


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


def test_ctrl_c_ends_a_wait_on_the_main_thread(writer):
    """As tf2_ros's waits (a threading condition), a timed lookup, check or a wait for a first
    bridge on the main thread ends with KeyboardInterrupt when SIGINT arrives, here while
    the writer's samples wake it; without, it would sleep out its minute."""
    import signal
    import time

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


MANY = r"""
import sys, threading, time
import tf_shm

buffer = tf_shm.Buffer(open_timeout=10_000_000_000)
started = []

def run():
    started.append(1)
    try:
        buffer.lookup_transform("map", "nowhere", 0, 60_000_000_000)
    except Exception:
        pass
    # Holds the GIL in turns with every other thread whose wait ended.
    while True:
        x = 0
        for i in range(200_000):
            x += i

for _ in range(int(sys.argv[1])):
    threading.Thread(target=run, daemon=True).start()
while len(started) < int(sys.argv[1]):
    time.sleep(0.01)
time.sleep(0.5)
print("exiting", flush=True)
"""


def test_exit_is_clean_with_many_waits_and_threads_that_hold_the_gil(writer):
    """Sixty daemon threads wait while the writer's samples wake them; a thread whose wait
    ended would then compete for the GIL with threads that hold it in turns. None may take it
    back once finalization can begin (an exit hook that woke them all and waited a grace
    period for them aborted this process in 3 of 3 runs)."""
    for _ in range(3):
        run = python(MANY, "60", timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stdout == "exiting\n"
        assert "FATAL" not in run.stderr, run.stderr


FORKED_CTRL_C = r"""
import os, sys, time
import tf_shm

read, write = os.pipe()
pid = os.fork()
if pid == 0:
    buffer = tf_shm.Buffer(open_timeout=10_000_000_000)
    os.write(write, b"w")
    start = time.monotonic()
    try:
        buffer.lookup_transform("map", "nowhere", 0, 60_000_000_000)
        print("no interrupt", flush=True)
    except KeyboardInterrupt:
        print(f"KeyboardInterrupt after {time.monotonic() - start:.1f} s", flush=True)
    os._exit(0)
os.read(read, 1)
time.sleep(0.5)
os.kill(pid, 2)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_ctrl_c_ends_a_wait_in_a_forked_child(writer):
    """A child forked after `import tf_shm` (multiprocessing's fork start method) has its own
    main thread, the one that forked: SIGINT ends its timed wait with KeyboardInterrupt, as it
    ends time.sleep there (with the parent's main thread kept, it slept out its minute)."""
    run = python(FORKED_CTRL_C)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("KeyboardInterrupt after "), run.stdout + run.stderr
