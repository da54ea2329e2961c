#!/usr/bin/env bash
# Everything the GPU machine has to confirm, in one command that fits its
# limits (600 s a command, 15 minutes of device time a session including a
# start-up of about a minute): the GPU tests, the engine and NCCL on device
# tensors, the kernel microbenchmarks against device copy bandwidth, and an
# Nsight Compute profile of the compaction kernel, most important first.
#
# Build here with CUDA (the default when nvcc is present) and bundle the
# shared libraries the GPU machine lacks:
#   ci/setup.sh && cmake --build build --target omnib_tests omnib-microbench &&
#     ci/bundle_libs.sh build/omni-bench build/omnib-microbench \
#       build/tests/omnib_tests build/tests/omni-bench-sabotage .device-libs
# The device tool carries 64 MiB in all: carry the four programs and
# .device-libs (not the whole build folder), without libnccl.so.2 (over
# 200 MB; use the GPU machine's own NCCL on LD_LIBRARY_PATH). Run there from
# the repository root:
#   LD_LIBRARY_PATH=$PWD/.device-libs ci/gpu_check.sh "$OUT"
# docs/gpu.md ("Checking it on a GPU machine") says the same at length.
#
# Steps, in order: libraries (ldd of the four programs: a "not found" stops
# the check with exit 1 before anything runs, naming the library and the
# fix), gpu-info (nvidia-smi, 20 s at most), gpu-tests, device-allreduce-0.01,
# -0.1, -1, device-inplace-block5000, microbench, profile-compaction (ncu).
# A microbenchmark that reports ERROR OCCURRED fails its step (the program
# still exits 0). A missing or failing ncu is "skipped", not a failure.
#
# Time: every step runs under GPU_CHECK_STEP_LIMIT seconds (default 180) and
# never past what is left of GPU_CHECK_BUDGET seconds (default 450, counted
# from the start); a step that would start with the budget used up is
# "skipped: budget". The whole check therefore ends within the budget plus a
# 5 s kill grace and the packing: under 8 minutes by default.
#
# Results, in the folder given (default gpu-results/, made if missing):
# summary.txt (each step: ok, FAILED or skipped, its seconds, and its figures:
# the omni/ps/nccl table rows and "omni vs best dense", the copy_fraction
# lines) and gpu-results.tar.gz (summary, every step's log, ldd output and
# JSON results under gpu-results/). Nothing else is left there: the logs are
# written to a work folder inside it that is removed after packing, also
# when a signal stops the check.
#
# Exit 0 when every step that ran passed (skips are fine), 1 otherwise, 2 on
# bad usage. GPU_CHECK_BUILD=DIR runs the programs of another build folder
# (DIR/omni-bench, DIR/omnib-microbench, DIR/tests/omnib_tests,
# DIR/tests/omni-bench-sabotage; the check's own test points it at stubs);
# GPU_CHECK_BENCH_FILTER and GPU_CHECK_BENCH_MIN_TIME narrow the
# microbenchmarks (default: every GPU benchmark, 0.05 s each);
# GPU_CHECK_NCU=PATH names the ncu to use (default: ncu on PATH, then
# /usr/local/cuda/bin/ncu, then /opt/nvidia/nsight-compute/*/ncu).
set -uo pipefail
here=$PWD
cd "$(dirname "$0")/.." || exit 2
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
out=gpu-results
[ $# -ge 1 ] && out=$(absolute "$1")
build=$(absolute "${GPU_CHECK_BUILD:-$PWD/build}")
build_shown=${GPU_CHECK_BUILD:-build}
limit="${GPU_CHECK_STEP_LIMIT:-180}"
budget="${GPU_CHECK_BUDGET:-450}"
[[ "$limit" =~ ^[0-9]+$ && "$limit" -ge 1 ]] || { echo "gpu_check: GPU_CHECK_STEP_LIMIT must be a whole number of seconds >= 1" >&2; exit 2; }
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "gpu_check: GPU_CHECK_BUDGET must be a whole number of seconds" >&2; exit 2; }
mkdir -p "$out" || exit 2
SECONDS=0  # the budget's clock
summary="$out/summary.txt"
: >"$summary" || exit 2
work=$(mktemp -d "$out/.gpu-check-work.XXXXXX") || exit 2
logs="$work/gpu-results"
mkdir "$logs"
failed=0
child=""

say() { printf '%s\n' "$@" | tee -a "$summary"; }
# record NAME STATUS SECONDS: one summary line per step.
record() { say "== $1: $2 ($3 s)"; }
# command_line WORD...: the words as the summary shows them, with the build
# folder as given and the files it writes by their names in the tarball.
command_line() {
  local line="$*"
  line=${line//"$logs/"/}
  echo "${line//"$build"/$build_shown}"
}

# Packs the logs and the summary into gpu-results.tar.gz (built in the work
# folder, then moved: the output folder's parent need not be writable) and
# removes the work folder. Runs once, on any exit; a failure to pack makes
# the exit status 1.
packed=0
finish() {
  [ "$packed" = 1 ] && return
  packed=1
  cp "$summary" "$logs/summary.txt"
  if tar -czf "$work/gpu-results.tar.gz" -C "$work" gpu-results && mv -f "$work/gpu-results.tar.gz" "$out/gpu-results.tar.gz"; then
    echo "gpu_check: results in $summary and $out/gpu-results.tar.gz ($((SECONDS)) s)"
  else
    say "== packing: FAILED (could not write $out/gpu-results.tar.gz)"
    rm -rf "$work"
    exit 1
  fi
  rm -rf "$work"
}
interrupted() {
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null && wait "$child" 2>/dev/null
  say "== interrupted by a signal after $SECONDS s"
  exit 1
}
trap finish EXIT
trap interrupted INT TERM

# run_step NAME COMMAND...: runs COMMAND with its output in NAME.log, under
# the step limit and what is left of the budget. Sets step_rc (the exit
# status: 0 ok, 124 or 137 timed out; "skip" when the budget is spent and
# nothing ran), step_seconds and step_why (the status text of a failure or
# skip); records nothing.
run_step() {
  local name=$1 left cap why=limit start
  shift
  left=$((budget - SECONDS))
  step_seconds=0
  if [ "$left" -le 0 ]; then
    step_rc=skip step_why="skipped: budget (${budget} s used up)"
    return
  fi
  cap=$limit
  [ "$left" -lt "$cap" ] && cap=$left why=budget
  start=$SECONDS
  printf '$ %s\n' "$*" >"$logs/$name.log"
  # In the background so that a signal reaches the trap at once, not only
  # when the step ends.
  timeout -k 5 "$cap" "$@" >>"$logs/$name.log" 2>&1 </dev/null &
  child=$!
  wait "$child"
  step_rc=$?
  child=""
  step_seconds=$((SECONDS - start))
  case $step_rc in
    0) step_why=ok ;;
    124 | 137) step_why="timed out at the $why's ${cap} s" ;;
    *) step_why="exit $step_rc" ;;
  esac
}

# step NAME COMMAND...: a step whose failure fails the check. With
# step_errors set (an ERE), a log line matching it fails the step too.
step() {
  local name=$1 errors
  run_step "$@"
  if [ "$step_rc" = 0 ] && [ -n "${step_errors:-}" ] &&
    errors=$(grep -cE -- "$step_errors" "$logs/$name.log"); then
    step_rc=1 step_why="$errors log lines match '$step_errors'"
  fi
  case $step_rc in
    0) record "$name" ok "$step_seconds" ;;
    skip) record "$name" "$step_why" 0 ;;
    *) record "$name" "FAILED: $step_why" "$step_seconds"; failed=1 ;;
  esac
  [ "$step_rc" = skip ] || say "   \$ $(command_line "${@:2}")"
}

# figures NAME PATTERN [MAX]: the step log's lines matching PATTERN (ERE),
# indented, into the summary.
figures() {
  [ -f "$logs/$1.log" ] || return 0
  grep -E -- "$2" "$logs/$1.log" | head -n "${3:-40}" | sed 's/^/   /' | tee -a "$summary"
}

# 1. Every program is there, and every shared library it needs resolves here.
programs=(omni-bench omnib-microbench tests/omnib_tests tests/omni-bench-sabotage)
absent=() unresolved=()
for p in "${programs[@]}"; do
  if [ ! -x "$build/$p" ]; then
    absent+=("$build_shown/$p is missing")
    continue
  fi
  ldd "$build/$p" >"$logs/ldd-$(basename "$p").txt" 2>&1
  while read -r lib _; do
    unresolved+=("$build_shown/$p needs $lib: not found")
  done < <(grep "not found" "$logs/ldd-$(basename "$p").txt")
done
if [ ${#absent[@]} -gt 0 ] || [ ${#unresolved[@]} -gt 0 ]; then
  record libraries FAILED "$SECONDS"
  [ ${#absent[@]} -gt 0 ] && say "${absent[@]/#/   }" \
    "   Build them first: cmake --build build --target omni-bench omnib_tests omnib-microbench"
  [ ${#unresolved[@]} -gt 0 ] && say "${unresolved[@]/#/   }" \
    "   Bundle the libraries where the build was made:" \
    "     ci/bundle_libs.sh build/omni-bench build/omnib-microbench build/tests/omnib_tests build/tests/omni-bench-sabotage .device-libs" \
    "   carry .device-libs with the build, and run with LD_LIBRARY_PATH=\$PWD/.device-libs (now: ${LD_LIBRARY_PATH:-unset})."
  say "   Nothing was run."
  exit 1
fi
record libraries ok "$SECONDS"

# 2. The GPU, whatever the budget (it is what every figure below ran on).
start=$SECONDS
if command -v nvidia-smi >/dev/null; then
  if timeout -k 2 20 nvidia-smi -L >"$logs/gpu-info.log" 2>&1 &&
    timeout -k 2 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem \
      --format=csv >>"$logs/gpu-info.log" 2>&1; then
    record gpu-info ok $((SECONDS - start))
  else
    record gpu-info "FAILED: nvidia-smi failed" $((SECONDS - start))
    failed=1
  fi
  sed 's/^/   /' "$logs/gpu-info.log" | head -n 20 | tee -a "$summary"
else
  record gpu-info "skipped: nvidia-smi not found" 0
fi

# 3. The GPU tests. They start omni-bench by the path it was built at; point
# them at this build.
export OMNIB_TEST_BINARY="$build/omni-bench" OMNIB_TEST_SABOTAGE_BINARY="$build/tests/omni-bench-sabotage"
step gpu-tests "$build/tests/omnib_tests" \
  --gtest_filter='Gpu*:*GpuCompaction*:*CudaBlockIo*:DeviceEndToEnd*:Nccl*:CliDevice*'
figures gpu-tests '^\[  PASSED  \]|^\[  SKIPPED \] [0-9]+ tests?,|^\[  FAILED  \]|FAILED TESTS?$'

# 4. The engine, ps and NCCL on device tensors. Several ranks share the one
# GPU: NCCL then runs with a distinct NCCL_HOSTID per rank (its socket
# transport), which each row's note says.
table='^ +size\(B\) |^ +[0-9]+ +[0-9]+ +[a-z0-9]+ +(omni|ps|nccl) |omni vs best dense'
for density in 0.01 0.1 1; do
  step "device-allreduce-$density" "$build/omni-bench" allreduce --device cuda --algo omni,ps,nccl \
    --density "$density" --nodes 4 -b 256M -e 256M -n 5 -w 1 --profile \
    -J "$logs/device-allreduce-$density.json" --force
  figures "device-allreduce-$density" "$table"
done
step device-inplace-block5000 "$build/omni-bench" allreduce --device cuda --algo omni,ps,nccl \
  --density 0.1 --nodes 4 -b 64M -e 64M --block-size 5000 --inplace --aggregators 2 -n 3 -w 1 \
  -J "$logs/device-inplace-block5000.json" --force
figures device-inplace-block5000 "$table"

# 5. The kernels against device-to-device copy bandwidth. A 256 MiB kernel
# takes 100-200 us, so 0.05 s is hundreds of launches per benchmark.
# (libbenchmark 1.7 takes the seconds without the "s" suffix.)
# A benchmark that fails (no device, a CUDA error) says ERROR OCCURRED and
# the program still exits 0: that fails the step.
# GPU_CHECK_BENCH_FILTER narrows them (default every GPU benchmark: about
# 120, a few minutes, mostly making 256 MiB inputs).
step_errors='ERROR OCCURRED' step microbench "$build/omnib-microbench" \
  --benchmark_filter="${GPU_CHECK_BENCH_FILTER:-Gpu}" --benchmark_min_time="${GPU_CHECK_BENCH_MIN_TIME:-0.05}" \
  --benchmark_out="$logs/microbench.json" --benchmark_out_format=json
figures microbench 'copy_fraction|ship_fraction|take_overhead|ERROR OCCURRED' 150

# 6. Why the compaction kernel falls short of copy bandwidth, where Nsight
# Compute is installed and loads: one launch of any kernel whose name holds
# "compact", at the GPU's own clocks; speed of light, occupancy, stalls.
if [ -n "${GPU_CHECK_NCU+set}" ]; then
  ncu_bin=$GPU_CHECK_NCU
else
  ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
fi
if [ -z "$ncu_bin" ] || [ ! -x "$ncu_bin" ]; then
  record profile-compaction "skipped: ncu not found${ncu_bin:+ at $ncu_bin}" 0
else
  ncu_command=("$ncu_bin" --clock-control none --kernel-name regex:compact --launch-skip 3 --launch-count 1
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis
    "$build/omnib-microbench" --benchmark_filter='GpuCompact/block:256/permille:10/' --benchmark_min_time=0.01)
  run_step profile-compaction "${ncu_command[@]}"
  if [ "$step_rc" = 0 ] && ! grep -q '==PROF== Profiling' "$logs/profile-compaction.log"; then
    record profile-compaction "skipped: ncu profiled no kernel matching regex:compact" "$step_seconds"
  elif [ "$step_rc" = 0 ]; then
    record profile-compaction ok "$step_seconds"
  elif [ "$step_rc" = skip ]; then
    record profile-compaction "$step_why" 0
  else
    record profile-compaction "skipped: ncu failed ($step_why)" "$step_seconds"
  fi
  [ "$step_rc" = skip ] || say "   \$ $(command_line "${ncu_command[@]}")"
  figures profile-compaction '==PROF== Profiling|^ +(Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy) ' 12
fi

say "== total: $SECONDS s of a $budget s budget; $([ "$failed" = 0 ] && echo "every step that ran passed" || echo "FAILED")"
exit $failed
