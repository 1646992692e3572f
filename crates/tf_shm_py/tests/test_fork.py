"""A buffer made before os.fork() (multiprocessing's fork start method): the child has a copy
of it but not its re-attach thread, and the two processes share that thread's wake-up eventfd.
Dropping the child's copy must neither join a thread the child does not have (it panicked) nor
stop the parent's, which keeps answering."""

from processes import python

SCRIPT = r"""
import os, sys, time
import tf_shm

buffer = tf_shm.Buffer(open_timeout=10_000_000_000)
deadline = time.monotonic() + 10
while not buffer.can_transform("map", "odom", 0):
    assert time.monotonic() < deadline, "no data"
    time.sleep(0.01)
pid = os.fork()
if pid == 0:
    try:
        buffer.lookup_transform("map", "odom", 0)
        del buffer
        import gc
        gc.collect()
    except BaseException as e:
        print(f"child: {type(e).__name__}: {e}", flush=True)
        os._exit(1)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print(f"child exit {os.waitstatus_to_exitcode(status)}", flush=True)
# The parent's buffer still follows the arena: its answers move on with the writer.
first = buffer.lookup_transform_tuple("map", "odom", 0)[0]
time.sleep(0.2)
later = buffer.lookup_transform_tuple("map", "odom", 0)[0]
print("parent answers", "moved" if later != first else "stuck", flush=True)
"""


def test_a_forked_child_drops_its_copy_of_a_buffer(writer):
    run = python(SCRIPT, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == "child exit 0\nparent answers moved\n", run.stdout + run.stderr
    assert "panicked" not in run.stderr, run.stderr


FORK_WHILE_WAITS_END = r"""
import os, sys, threading, time
import tf_shm

buffer = tf_shm.Buffer(open_timeout=10_000_000_000)
stop = False

def short_waits():
    # Waits of 1 ms that end (no answer) over and over: each end goes through the exit
    # protocol's bookkeeping, which a fork may copy mid-way.
    while not stop:
        buffer.can_transform("map", "nowhere", 0, 1_000_000)

threads = [threading.Thread(target=short_waits, daemon=True) for _ in range(6)]
for t in threads:
    t.start()
hung = 0
for i in range(1000):
    pid = os.fork()
    if pid == 0:
        # The child's own waits, then a clean exit (its exit hook runs too): one that times
        # out, and (every tenth child) one for data 20 ms ahead, which the child notices by
        # itself (the owner wakes only the parent's waits).
        buffer.can_transform("map", "nowhere", 0, 1_000_000)
        if i % 10:
            sys.exit(0)
        ahead = buffer.lookup_transform_tuple("map", "odom", 0)[0] + 20_000_000
        start = time.monotonic()
        if not buffer.can_transform("map", "odom", ahead, 5_000_000_000):
            sys.exit(3)
        sys.exit(0 if time.monotonic() - start < 2 else 4)
    deadline = time.monotonic() + 5
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0, status
            break
        if time.monotonic() > deadline:
            hung += 1
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            break
        time.sleep(0.001)
stop = True
print(f"hung {hung}", flush=True)
"""


def test_children_forked_while_waits_end_wait_and_exit(writer):
    """A child forked while other threads' waits end (each end takes a lock its copy could
    hold) waits and exits: 1000 forks (before: 2-6 children hung in the wait)."""
    run = python(FORK_WHILE_WAITS_END, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout == "hung 0\n", run.stdout + run.stderr
