#!/usr/bin/env bash
# Everything the GPU machine has to confirm, in one run: the GPU tests, the
# kernel microbenchmarks against device copy bandwidth, the engine and NCCL on
# device tensors, and the baselines table with NCCL beside them.
#
# Build here with CUDA (the default when nvcc is present), bundle the shared
# libraries the GPU machine lacks, then run this there from the repository
# root with the build and the bundle carried along:
#   ci/setup.sh && ../shared/device/bundle-libs.sh build/omni-bench build/omnib-microbench \
#       build/tests/omnib_tests .device-libs
#   (GPU machine) LD_LIBRARY_PATH=$PWD/.device-libs ci/gpu_check.sh "$OUT"
# Results land in the folder given (default gpu-results/): logs and JSON.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-gpu-results}"
mkdir -p "$out"
failed=0
step() {  # step NAME COMMAND...: run, log to NAME.log, remember a failure
  local name="$1"; shift
  echo "== $name: $*" | tee -a "$out/summary.txt"
  if "$@" >"$out/$name.log" 2>&1; then echo "   ok" | tee -a "$out/summary.txt"
  else echo "   FAILED (exit $?)" | tee -a "$out/summary.txt"; failed=1; fi
  tail -n 25 "$out/$name.log"
}

nvidia-smi -L >"$out/gpu.txt" 2>&1 || true
# The tests start omni-bench by the path it was built at; point them here.
export OMNIB_TEST_BINARY="$PWD/build/omni-bench" OMNIB_TEST_SABOTAGE_BINARY="$PWD/build/tests/omni-bench-sabotage"
step gpu-tests build/tests/omnib_tests \
  --gtest_filter='Gpu*:*GpuCompaction*:*CudaBlockIo*:DeviceEndToEnd*:Nccl*:CliDevice*'
step microbench build/omnib-microbench --benchmark_filter='Gpu' \
  --benchmark_out="$out/microbench.json" --benchmark_out_format=json
# Several ranks share the one GPU: NCCL then runs with a distinct
# NCCL_HOSTID per rank (its socket transport), which each row's note says.
step device-allreduce build/omni-bench allreduce --device cuda --algo omni,nccl,ps --density 0.1 --nodes 4 \
  -b 64M -e 256M -f 4 -n 10 -w 3 -J "$out/device-allreduce.json" --force
step baselines-table build/omni-bench allreduce --density 0.01 --nodes 4 -b 64M -e 64M -n 5 -w 1 \
  --algo omni,ring,ps,gloo-ring,allgather,sparcml-split,nccl -J "$out/baselines.json" --force
exit $failed
