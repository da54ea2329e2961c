#!/usr/bin/env bash
# Builds the test suite (and omni-bench first, with ci/setup.sh, if there is
# no build yet) and runs it. Exits non-zero on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/omni-bench ] || ci/setup.sh
cmake --build build -j "$(nproc)"
# Three tests per core: most multi-rank tests spend their time waiting (for
# peers, for a timeout, on a stopped rank), not computing, and the timeouts
# they check allow for the load (the suite passes at -j6 on 2 cores whose
# load average is above 20). OMNIB_TEST_JOBS overrides.
jobs=${OMNIB_TEST_JOBS:-$((3 * $(nproc)))}
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 600
