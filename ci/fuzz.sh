#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer (build-fuzz/, apart from the main build) and runs
# each for a bounded time from its seed corpus fuzz/corpus/<target>/. Fails on
# any finding and prints the command that reproduces it. docs/fuzzing.md.
#
# Usage: ci/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]
#   SECONDS_PER_TARGET  default $OMNIB_FUZZ_SECONDS, else 30
#   TARGET              e.g. npy_header; default every fuzz/*_fuzz.cc
# Targets run $OMNIB_FUZZ_JOBS at a time (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-${OMNIB_FUZZ_SECONDS:-30}}
[ $# -gt 0 ] && shift
jobs=${OMNIB_FUZZ_JOBS:-$(nproc)}
build=build-fuzz

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*_fuzz.cc; do targets+=("$(basename "$f" _fuzz.cc)"); done
fi

start=$(date +%s)
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DOMNIB_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"
echo "fuzz: built in $(( $(date +%s) - start )) s; ${#targets[@]} targets, ${seconds} s each, ${jobs} at a time"

# Runs one target; its log is $build/fuzz-logs/<target>.log.
run_target() {
  local t=$1
  local bin="$build/fuzz/${t}_fuzz" seeds="fuzz/corpus/$t"
  local work="$build/corpus/$t" findings="$build/findings/$t" log="$build/fuzz-logs/$t.log"
  rm -rf "$findings"
  mkdir -p "$work" "$findings"
  # New inputs go to $work (kept between local runs); the seeds stay as they are.
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$work" "$seeds" >"$log" 2>&1
}

rm -rf "$build/fuzz-logs"
mkdir -p "$build/fuzz-logs"
for t in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/${t}_fuzz" ]; then
    echo "fuzz: no target '$t': add fuzz/${t}_fuzz.cc and 'omnib_fuzz_target($t SOURCES...)' to fuzz/CMakeLists.txt" >&2
    exit 2
  fi
  if [ -z "$(ls -A "fuzz/corpus/$t" 2>/dev/null)" ]; then
    echo "fuzz: fuzz/corpus/$t/ is missing or empty: add a few small valid and invalid inputs (fuzz/make_seeds.py)" >&2
    exit 2
  fi
done

for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  (run_target "$t" && rc=0 || rc=$?; echo "$rc" >"$build/fuzz-logs/$t.rc") &
done
wait

failed=0
for t in "${targets[@]}"; do
  log="$build/fuzz-logs/$t.log"
  if [ "$(cat "$build/fuzz-logs/$t.rc")" = 0 ]; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $t: ok, ${runs:-?} inputs"
  else
    failed=1
    echo "fuzz: $t: FINDING (log: $log)"
    tail -n 30 "$log" | sed 's/^/    /'
    for a in "$build/findings/$t"/*; do
      [ -e "$a" ] && echo "fuzz: reproduce with: $build/fuzz/${t}_fuzz $a"
    done
  fi
done
echo "fuzz: done in $(( $(date +%s) - start )) s"
exit $failed
