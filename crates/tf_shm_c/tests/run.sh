#!/usr/bin/env bash
# The C and C++ tests of tf_shm_c: checks that include/tf_shm.h is what cbindgen generates from
# src/, then builds tests/test_c.c and tests/test_cpp.cpp with gcc and clang under ASan and
# UBSan against the release build of libtf_shm_c (and the test-only testkit) and runs them.
#   crates/tf_shm_c/tests/run.sh          # from anywhere; needs cbindgen, gcc, g++, clang
set -euo pipefail
cd "$(dirname "$0")/../../.."
crate=crates/tf_shm_c
rel=${CARGO_TARGET_DIR:-$PWD/target}/release

cargo build --release -p tf_shm_c -p tf_shm_c_testkit

fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
cbindgen --quiet --config $crate/cbindgen.toml --crate tf_shm_c --output "$fresh"
if ! diff -u $crate/include/tf_shm.h "$fresh"; then
  echo "tf_shm_c: include/tf_shm.h is stale; regenerate it with:" >&2
  echo "  cbindgen --config $crate/cbindgen.toml --crate tf_shm_c --output $crate/include/tf_shm.h" >&2
  exit 1
fi

out=$rel/tf_shm_c_tests
mkdir -p "$out"
san=(-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
inc=(-I$crate/include -I$crate/tests)
libs=("$rel/libtf_shm_c.so" "$rel/libtf_shm_c_testkit.so" "-Wl,-rpath,$rel" -lpthread -lm)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
for cc in gcc clang; do
  cxx=$([ $cc = gcc ] && echo g++ || echo clang++)
  echo "--- C tests, $cc, ASan + UBSan"
  $cc -std=c11 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" $crate/tests/test_c.c -o "$out/test_c_$cc" "${libs[@]}"
  "$out/test_c_$cc"
  if [ -f $crate/tests/test_cpp.cpp ]; then
    echo "--- C++ tests, $cxx, ASan + UBSan"
    $cxx -std=c++17 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" $crate/tests/test_cpp.cpp -o "$out/test_cpp_$cc" "${libs[@]}"
    "$out/test_cpp_$cc"
  fi
done
