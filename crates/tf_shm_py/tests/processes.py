"""Real processes for the tests that need them: a writer keeping an arena live, and a script
run in a new interpreter."""

import subprocess
import sys

# A writer process (the test-only owner) making a sample every 0.5 ms, for tests that run real
# processes against a live arena.
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


def python(script, *args, timeout=30):
    """Runs `script` in a new interpreter (this one's) with `args`; its exit code and output."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
