#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite. Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/omni-bench ] || ci/setup.sh
cmake --build build -j "$(nproc)"
# Multi-rank tests start many processes: run test binaries one at a time so
# timing-sensitive checks (timeouts) are not starved on a 2-core machine.
ctest --test-dir build --output-on-failure -j 1 --timeout 600
