#!/usr/bin/env bash
# Builds omni-bench and its tests without each optional backend in turn
# (libfabric off, Gloo off, CUDA and NCCL off, SimGrid off) and runs each build's suite;
# ci/test.sh covers the build with everything on. Each configuration has its
# own folder (build-no-<name>/); with ccache (ci/setup.sh builds through it)
# only the files a backend touches are compiled again. By default SimGrid is
# off in the `cuda` build (the one with the fewest backends) rather than in
# a build of its own: the two touch different files, and a fourth build and
# suite would add some five minutes to CI.
#
# Usage: ci/build_configs.sh [name...]   names: fabric gloo cuda simgrid (default: fabric gloo cuda)
# OMNIB_TEST_JOBS   tests run at once (default three per core, as ci/test.sh)
# OMNIB_CONFIG_CTEST_ARGS   extra ctest arguments (e.g. -LE "gate|soak")
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A cmake_args=(
  [fabric]="-DOMNIB_USE_LIBFABRIC=OFF"
  [gloo]="-DOMNIB_USE_GLOO=OFF"
  [cuda]="-DOMNIB_USE_CUDA=OFF -DOMNIB_USE_NCCL=OFF -DOMNIB_USE_SIMGRID=OFF"
  [simgrid]="-DOMNIB_USE_SIMGRID=OFF"
)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(fabric gloo cuda)
launcher=()
command -v ccache >/dev/null &&
  launcher=("-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_BASEDIR=$PWD;ccache"
            "-DCMAKE_CUDA_COMPILER_LAUNCHER=env;CCACHE_BASEDIR=$PWD;ccache")
jobs=${OMNIB_TEST_JOBS:-$((3 * $(nproc)))}
for name in "${names[@]}"; do
  [ -n "${cmake_args[$name]:-}" ] || { echo "build_configs: unknown configuration '$name' (fabric, gloo, cuda, simgrid)" >&2; exit 2; }
  dir="build-no-$name"
  start=$SECONDS
  echo "build_configs: without $name (${cmake_args[$name]}) in $dir/"
  mkdir -p "$dir"
  # shellcheck disable=SC2086  # the arguments are a list
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOMNIB_BUILD_BENCHMARKS=OFF "${launcher[@]}" \
    ${cmake_args[$name]} >"$dir/cmake.log" 2>&1 || { cat "$dir/cmake.log" >&2; exit 1; }
  grep "omni-bench: CUDA=" "$dir/cmake.log" || true
  cmake --build "$dir" -j "$(nproc)"
  # shellcheck disable=SC2086
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 600 ${OMNIB_CONFIG_CTEST_ARGS:-}
  echo "build_configs: without $name: built and passed in $((SECONDS - start)) s"
done
