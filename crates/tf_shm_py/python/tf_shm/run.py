"""Runs one Python program with tf2_ros's ``Buffer`` and ``TransformListener`` replaced by
tf_shm's, as ``TF_SHM_TF2_ROS=1`` does where the wheel's ``.pth`` hook is installed, for
installs where it is not (``pip install --target``, ``PYTHONPATH``)::

    python3 -m tf_shm.run my_node.py [args...]
    python3 -m tf_shm.run -m my_package.my_node [args...]

The program runs as ``__main__`` with ``sys.argv`` = its path or module name and its arguments
(as ``python3 my_node.py args`` would); ``TF_SHM_TF2_ROS=1`` is set for the processes it starts.
What is replaced and what stays tf2_ros's own: the module ``_tf_shm_tf2_ros``. Exit status 2
and a usage line when no program is given. Unlike the ``.pth`` hook, which falls back to
tf2_ros's own listener, this fails with tf_shm's ImportError when tf_shm cannot be loaded: it
is the tf_shm package itself that runs the program.
"""

import os
import runpy
import sys

import _tf_shm_tf2_ros

USAGE = "usage: python3 -m tf_shm.run SCRIPT [ARG...] | -m MODULE [ARG...]"


def main(argv):
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        sys.stderr.write(USAGE + "\n")
        return 2
    os.environ[_tf_shm_tf2_ros.ENV] = "1"
    _tf_shm_tf2_ros.install()
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
