#!/usr/bin/env bash
# Builds the Python package tf_shm (crates/tf_shm_py) into a wheel with pip (maturin is the PEP
# 517 backend, fetched from PyPI), then installs it twice:
#   * into a plain venv of Debian's Python ($TF_SHM_PY_BUILD, default ~/.cache/tf_shm/py-build;
#     no ROS there), which also gets pytest and ruff for scripts/test.sh;
#   * into target/py-site, for PYTHONPATH in the ROS environment and Debian's Python, without
#     touching their site-packages.
# Prints the venv's directory on stdout. Used by scripts/test.sh and scripts/bench.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
pyb=${TF_SHM_PY_BUILD:-$HOME/.cache/tf_shm/py-build}
# The ROS environment's variables must not leak into the build or into the ROS-free venv.
noros() { env -u PYTHONPATH -u VIRTUAL_ENV -u AMENT_PREFIX_PATH "$@"; }
[ -x "$pyb/bin/python" ] || /usr/bin/python3 -m venv "$pyb"
noros "$pyb/bin/pip" install -q "pytest>=7" "ruff==0.17.6" >&2
rm -rf target/wheels/tf_shm-*.whl target/py-site
noros "$pyb/bin/pip" wheel -q --no-deps -w target/wheels ./crates/tf_shm_py >&2
noros "$pyb/bin/pip" install -q --force-reinstall --no-deps target/wheels/tf_shm-*.whl >&2
noros "$pyb/bin/pip" install -q --no-deps --target target/py-site target/wheels/tf_shm-*.whl >&2
echo "$pyb"
