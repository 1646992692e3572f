#!/usr/bin/env bash
# ROS 2 Jazzy for tf_shm where no apt ROS exists: PyPI wheels in a venv, our own tf2_msgs (no
# wheel ships it), and the Jazzy packages no registry serves (tf2, tf2_py, tf2_ros, launch,
# ros2cli, ...) built from their sources at the commits pinned in ros/jazzy-sources.txt.
# Why each step is needed is said at the step.
#   TF_SHM_ROS_SOURCES=DIR               those sources (DIR/<repository>/..., DIR/COMMITS); unset:
#                                        /opt/ros/jazzy if it has them, else fetched with git
#   scripts/ros-env.sh setup             install/repair; a no-op while the stamp matches
#   eval "$(scripts/ros-env.sh env)"     load the environment into this shell
#   scripts/ros-env.sh run CMD...        run CMD in the environment
#   scripts/ros-env.sh freeze            pip freeze of the venv (to refresh ros/constraints.txt)
#   scripts/ros-env.sh stamp             the stamp setup compares (its inputs' hash)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=${TF_SHM_ROS_PREFIX:-$HOME/.cache/tf_shm/ros-jazzy}
VENV=$PREFIX/venv
MSGS=$PREFIX/tf2_msgs                   # install prefix of ros/tf2_msgs
JAZZY=$PREFIX/jazzy                     # install prefix of the packages built from Jazzy's sources
APT_JAZZY=/opt/ros/jazzy
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
  colcon-package-information colcon-package-selection example-robot-data
  # what launch, launch_ros and ros2cli import; tf2_ros imports sensor_msgs
  osrf-pycommon psutil argcomplete ros-jazzy-sensor-msgs)
# Built from ROS 2 Jazzy's sources (repository/package): CMake packages, then Python packages.
JAZZY_CMAKE=(geometry2/tf2 geometry2/tf2_py rcl_interfaces/composition_interfaces)
JAZZY_PY=(geometry2/tf2_ros_py geometry2/tf2_tools launch/launch launch/launch_xml
  launch/launch_yaml launch_ros/launch_ros launch_ros/ros2launch ros2cli/ros2cli ros2cli/ros2pkg
  ros2cli/ros2run ros2cli/ros2topic ros2cli/ros2node ros2cli/ros2service ros2cli/ros2param)
# Header-only C++ interfaces (their libraries need rclcpp, which has no wheel).
JAZZY_HEADERS=(geometry2/tf2_ros geometry2/tf2_geometry_msgs geometry2/tf2_sensor_msgs)

die() { echo "ros-env: $*" >&2; exit 1; }

hash_files() { (cd "$ROOT" && find "$@" -type f -print0 | sort -z | xargs -0 sha256sum); }

# Where the Jazzy sources come from: "DIR" (TF_SHM_ROS_SOURCES), "apt" or "git".
jazzy_origin() {
  if [[ -n ${TF_SHM_ROS_SOURCES:-} ]]; then
    [[ -f $TF_SHM_ROS_SOURCES/COMMITS ]] || die "TF_SHM_ROS_SOURCES=$TF_SHM_ROS_SOURCES has no COMMITS file"
    echo "$TF_SHM_ROS_SOURCES"
  elif [[ -f $APT_JAZZY/share/tf2_ros/package.xml && -f $APT_JAZZY/share/ros2cli/package.xml ]]; then
    echo apt
  else
    echo git
  fi
}

# The commits the sources are at: the folder's COMMITS, or the pins.
jazzy_commits() {
  case $1 in
    apt) echo apt ;;
    git) awk '!/^#/ && NF {print $1, $3}' "$ROOT/ros/jazzy-sources.txt" ;;
    *) sort "$1/COMMITS" ;;
  esac
}

# Each part of the setup has a stamp of its inputs; the whole setup's stamp covers them all.
stamp_msgs() { { declare -f build_msgs; hash_files ros/tf2_msgs; } | sha256sum | cut -d' ' -f1; }
stamp_jazzy() {
  { declare -f build_jazzy install_jazzy_py; echo "${JAZZY_CMAKE[*]} ${JAZZY_PY[*]} ${JAZZY_HEADERS[*]}"
    jazzy_commits "$1"; hash_files ros/jazzy-sources.txt third_party/rosidl_runtime_py; } |
    sha256sum | cut -d' ' -f1
}
stamp() {
  { cat "$ROOT/scripts/ros-env.sh"; hash_files ros/constraints.txt; stamp_msgs; stamp_jazzy "$1"; } |
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
  [[ -f $MSGS/stamp && $(<"$MSGS/stamp") == "$(stamp_msgs)" ]] && return
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
  stamp_msgs >"$MSGS/stamp"
}

# The pinned repositories, fetched at their commits (a user's machine; CI names a folder instead).
fetch_jazzy() {
  local dir=$PREFIX/sources name url commit
  mkdir -p "$dir"
  : >"$dir/COMMITS.new"
  while read -r name url commit; do
    [[ -z $name || $name == \#* ]] && continue
    if [[ $(git -C "$dir/$name" rev-parse HEAD 2>/dev/null) != "$commit" ]]; then
      rm -rf "$dir/$name"
      git init -q "$dir/$name"
      git -C "$dir/$name" fetch -q --depth 1 "$url" "$commit" || die "cannot fetch $url at $commit"
      git -C "$dir/$name" checkout -q FETCH_HEAD
    fi
    echo "$name $commit" >>"$dir/COMMITS.new"
  done <"$ROOT/ros/jazzy-sources.txt"
  mv "$dir/COMMITS.new" "$dir/COMMITS"
}

# CMake packages (tf2, tf2_py, composition_interfaces) and the header-only interfaces into $JAZZY.
build_jazzy() {
  local src=$1 pkg name build log=$PREFIX/build/jazzy.log
  rm -rf "$PREFIX/build/jazzy" "$JAZZY"
  mkdir -p "$PREFIX/build/jazzy"
  (                                     # set -e is off in here (because of ||): chain with &&
    eval "$(print_env)"
    export AMENT_PREFIX_PATH=$JAZZY:$MSGS:$VENV
    for pkg in "${JAZZY_CMAKE[@]}"; do
      name=${pkg##*/} build=$PREFIX/build/jazzy/${pkg##*/}
      echo "== $pkg" &&
        cmake -S "$src/$pkg" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
          -DCMAKE_PREFIX_PATH="$JAZZY;$MSGS;$VENV" -DCMAKE_INSTALL_PREFIX="$JAZZY" \
          -DPython3_EXECUTABLE="$VENV/bin/python3" &&
        cmake --build "$build" -j"$(nproc)" && cmake --install "$build" || exit 1
    done
    for pkg in "${JAZZY_HEADERS[@]}"; do  # laid out as their CMake install does
      mkdir -p "$JAZZY/include/${pkg##*/}" && cp -r "$src/$pkg/include/." "$JAZZY/include/${pkg##*/}/" || exit 1
    done
  ) >"$log" 2>&1 || { tail -40 "$log" >&2; die "building ROS 2 Jazzy packages failed, full log: $log"; }
}

# Python packages into the venv (entry points such as `ros2`, ament index markers); from copies,
# since pip writes into the source folder and the sources may be read-only.
install_jazzy_py() {
  local src=$1 tmp pkg dirs=() log=$PREFIX/build/jazzy-py.log
  tmp=$(mktemp -d)
  for pkg in "${JAZZY_PY[@]}"; do
    mkdir -p "$tmp/${pkg##*/}"
    (cd "$src/$pkg" && tar --exclude=./build --exclude='./*.egg-info' -cf - .) | tar -xf - -C "$tmp/${pkg##*/}"
    dirs+=("$tmp/${pkg##*/}")
  done
  cp -r "$ROOT/third_party/rosidl_runtime_py" "$tmp/" && dirs+=("$tmp/rosidl_runtime_py")
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation \
    --force-reinstall "${dirs[@]}" >"$log" 2>&1 ||
    { tail -40 "$log" >&2; rm -rf "$tmp"; die "installing ROS 2 Jazzy Python packages failed, full log: $log"; }
  rm -rf "$tmp"
  # tf2_geometry_msgs' Python module is installed by its CMake file, which needs tf2_ros's C++ library.
  cp -r "$src/geometry2/tf2_geometry_msgs/src/tf2_geometry_msgs" "$SITE/"
  # `ros2 run PKG EXE` looks in <prefix>/lib/PKG/, where colcon puts what pip puts in bin/.
  mkdir -p "$VENV/lib/tf2_tools"
  ln -sfn ../../bin/view_frames "$VENV/lib/tf2_tools/view_frames"
}

setup_jazzy() {
  local origin=$1 src want
  want=$(stamp_jazzy "$origin")
  [[ -f $JAZZY/stamp && $(<"$JAZZY/stamp") == "$want" ]] && return
  case $origin in
    apt) echo "ros-env: using $APT_JAZZY for tf2, tf2_ros, launch and ros2cli"
      rm -rf "$JAZZY"; mkdir -p "$JAZZY"; echo "$want" >"$JAZZY/stamp"; return ;;
    git) fetch_jazzy; src=$PREFIX/sources ;;
    *) src=$origin
      [[ $(jazzy_commits "$src") == "$(jazzy_commits git | sort)" ]] ||
        echo "ros-env: warning: $src/COMMITS differs from ros/jazzy-sources.txt; building what $src holds" >&2 ;;
  esac
  build_jazzy "$src"
  install_jazzy_py "$src"
  echo "$origin" >"$JAZZY/origin"
  echo "$want" >"$JAZZY/stamp"
}

setup() {
  local origin want
  origin=$(jazzy_origin)
  want=$(stamp "$origin")
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
  setup_jazzy "$origin"
  echo "$want" >"$PREFIX/stamp"
  echo "ros-env: ready ($PREFIX)"
}

print_env() {
  [[ -x $VENV/bin/python3 ]] || die "no ROS environment in $PREFIX: run scripts/ros-env.sh setup"
  local ld="$JAZZY/lib:$MSGS/lib:$VENV/lib" d ament="$JAZZY:$MSGS:$VENV"
  local py="$JAZZY/lib/python3.11/site-packages:$MSGS/lib/python3.11/site-packages"
  for d in "$SITE"/ros_*.libs; do ld+=":$d"; done  # the wheels' RPATHs point nowhere
  if [[ $(cat "$JAZZY/origin" 2>/dev/null) == apt || ! -f $JAZZY/origin && -d $APT_JAZZY/lib ]]; then
    ld+=":$APT_JAZZY/lib" ament+=":$APT_JAZZY" py+=":$APT_JAZZY/lib/python3.11/site-packages"
  fi
  printf 'export %s=%q\n' \
    VIRTUAL_ENV "$VENV" \
    PATH "$VENV/bin:$PATH" \
    AMENT_PREFIX_PATH "$ament" \
    CMAKE_PREFIX_PATH "$ament" \
    LD_LIBRARY_PATH "$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    PYTHONPATH "$py${PYTHONPATH:+:$PYTHONPATH}" \
    ROS_DISTRO jazzy \
    ROS_VERSION 2 \
    ROS_PYTHON_VERSION 3 \
    ROS_LOG_DIR "${ROS_LOG_DIR:-$PREFIX/log}" \
    ROS_AUTOMATIC_DISCOVERY_RANGE LOCALHOST \
    IDL_PACKAGE_FILTER "std_msgs;geometry_msgs;tf2_msgs;builtin_interfaces;rosgraph_msgs" \
    TF_SHM_PR2_URDF "$SITE/cmeel.prefix/share/example-robot-data/robots/pr2_description/urdf/pr2.urdf"
}

case ${1:-} in
  setup)
    # One setup at a time per prefix: two at once (two checkouts sharing ~/.cache) built into
    # the same directories and one of them failed half-way.
    mkdir -p "$PREFIX"
    exec 9>"$PREFIX/.setup.lock"
    flock -n 9 || { echo "ros-env: another setup of $PREFIX is running; waiting for it" >&2; flock 9; }
    setup ;;
  env) print_env ;;
  run)
    shift; [[ $# -gt 0 ]] || die "usage: $0 run CMD..."
    eval "$(print_env)"; mkdir -p "$ROS_LOG_DIR"; exec "$@" ;;
  freeze)
    echo "# pip constraints for scripts/ros-env.sh: \`pip freeze\` of a working venv (Debian 12, Python 3.11)."
    echo "# Regenerate: scripts/ros-env.sh freeze > ros/constraints.txt"
    "$VENV/bin/pip" freeze --all --disable-pip-version-check ;;
  stamp) stamp "$(jazzy_origin)" ;;
  *) die "usage: $0 setup | env | run CMD... | freeze | stamp" ;;
esac
