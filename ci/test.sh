#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite. Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/omni-bench ] || ci/setup.sh
cmake --build build -j "$(nproc)"
# Two tests at a time: the multi-rank tests start several processes each,
# and timeout checks allow for that load on a 2-core machine.
ctest --test-dir build --output-on-failure -j 2 --timeout 600
