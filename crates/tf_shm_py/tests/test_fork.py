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
