#!/usr/bin/env bash
# Everything the GPU machine has to confirm, in one run: the GPU tests, the
# kernel microbenchmarks against device copy bandwidth, and the engine and NCCL
# on device tensors.
#
# Build here with CUDA (the default when nvcc is present), bundle the shared
# libraries the GPU machine lacks, then run this there from the repository
# root with the build and the bundle carried along:
#   ci/setup.sh && cmake --build build --target omnib_tests omnib-microbench &&
#     ci/bundle_libs.sh build/omni-bench build/omnib-microbench \
#       build/tests/omnib_tests .device-libs
#   (GPU machine) LD_LIBRARY_PATH=$PWD/.device-libs ci/gpu_check.sh "$OUT"
# Results land in the folder given (default gpu-results/): summary.txt, one log
# per step and the JSON results, also packed into gpu-results.tar.gz (the
# device tool brings back only a few files). Every step has a time limit
# (GPU_CHECK_STEP_LIMIT seconds, default 240) so a hang cannot eat the lease.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-gpu-results}"
limit="${GPU_CHECK_STEP_LIMIT:-240}"
mkdir -p "$out"
failed=0
step() {  # step NAME COMMAND...: run under the limit, log to NAME.log, remember a failure
  local name="$1"; shift
  local start=$SECONDS
  echo "== $name: $*" | tee -a "$out/summary.txt"
  if timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1; then echo "   ok ($((SECONDS - start)) s)" | tee -a "$out/summary.txt"
  else echo "   FAILED (exit $?, $((SECONDS - start)) s)" | tee -a "$out/summary.txt"; failed=1; fi
  tail -n 30 "$out/$name.log"
}

nvidia-smi -L >"$out/gpu.txt" 2>&1 || true
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv >>"$out/gpu.txt" 2>&1 || true
cat "$out/gpu.txt"
# The tests start omni-bench by the path it was built at; point them here.
export OMNIB_TEST_BINARY="$PWD/build/omni-bench" OMNIB_TEST_SABOTAGE_BINARY="$PWD/build/tests/omni-bench-sabotage"
step gpu-tests build/tests/omnib_tests \
  --gtest_filter='Gpu*:*GpuCompaction*:*CudaBlockIo*:DeviceEndToEnd*:Nccl*:CliDevice*'
step microbench build/omnib-microbench --benchmark_filter='Gpu' --benchmark_min_time=0.2 \
  --benchmark_out="$out/microbench.json" --benchmark_out_format=json
# Why the compaction kernel falls short of copy bandwidth, where Nsight
# Compute is installed: one launch, speed of light, occupancy, stall reasons.
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [ -n "$ncu_bin" ]; then
  step profile-compaction "$ncu_bin" --kernel-name regex:compact_small --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    build/omnib-microbench --benchmark_filter='GpuCompact/block:256/permille:10/' --benchmark_min_time=0.01
fi
# Several ranks share the one GPU: NCCL then runs with a distinct
# NCCL_HOSTID per rank (its socket transport), which each row's note says.
for density in 0.01 0.1 1; do
  step "device-allreduce-$density" build/omni-bench allreduce --device cuda --algo omni,ps,nccl \
    --density "$density" --nodes 4 -b 256M -e 256M -n 5 -w 1 --profile \
    -J "$out/device-allreduce-$density.json" --force
done
step device-inplace-block5000 build/omni-bench allreduce --device cuda --algo omni,ps,nccl \
  --density 0.1 --nodes 4 -b 64M -e 64M --block-size 5000 --inplace --aggregators 2 -n 3 -w 1 \
  -J "$out/device-inplace-block5000.json" --force
tar -czf "$out/../gpu-results.tar.gz" -C "$out" . 2>/dev/null && mv "$out/../gpu-results.tar.gz" "$out/"
exit $failed
