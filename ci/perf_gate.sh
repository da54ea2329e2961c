#!/usr/bin/env bash
# CI performance gate: runs a small, quick benchmark and judges it against
# results/ci-baseline.json with `omni-bench compare` (docs/ci-gate.md).
#
#   ci/perf_gate.sh [compare options...]   run and compare; exits with compare's code
#                                          (0 pass, 5 regression), or the benchmark's
#                                          own (3 wrong results, 4 timeout, ...)
#   ci/perf_gate.sh --update               regenerate the baseline with the same command
#
# What is gated, and why it holds on a shared 2-core runner:
# - correctness: every call of every algorithm is checked; a wrong call fails
#   the benchmark itself (exit 3) before any comparison;
# - wire bytes and frames: exact for a given seed, compared exactly;
# - omni's speedup over ring and ps, run by run (each run interleaves the
#   three algorithms, so machine speed cancels within a run): a drop beyond
#   TOLERANCE that the Mann-Whitney test on the per-run speedups finds
#   significant;
# - CPU time of all ranks per wire byte, run by run, over the median of
#   ring's runs (load moves it little, and a CI host slower at everything
#   cancels out: the same code gave every algorithm 20-60% more CPU per byte
#   on one host of this kind than on another): a rise beyond CPU_TOLERANCE
#   (or the runs' own spread, if larger).
set -euo pipefail

# --- what the gate measures (change these together with the baseline: --update)
ALGOS="omni,ring,ps"       # the engine, a dense baseline on the same transport, the engine dense
DENSITIES="0.01,0.1"
NODES=4
SIZE=4M
ITERS=10
WARMUP=3
REPEAT=5                   # whole runs per density: the samples of every test
METRICS="bytes,frames,speedup,cpu,correct"
TOLERANCE="${PERF_GATE_TOLERANCE:-0.25}"          # relative speedup drop allowed
CPU_TOLERANCE="${PERF_GATE_CPU_TOLERANCE:-0.25}"  # relative rise of CPU per wire byte allowed
CPU_REFERENCE=ring                                # CPU per byte is judged over this algorithm's
ALPHA="${PERF_GATE_ALPHA:-0.05}"                  # a drop must also be this significant (5 runs a side)
BASELINE="${PERF_GATE_BASELINE:-results/ci-baseline.json}"

cd "$(dirname "$0")/.."

# The binary: $OMNI_BENCH, else build/omni-bench, else omni-bench on PATH.
find_binary() {
  if [[ -n "${OMNI_BENCH:-}" ]]; then echo "$OMNI_BENCH"; return; fi
  if [[ -x build/omni-bench ]]; then echo build/omni-bench; return; fi
  if command -v omni-bench >/dev/null; then command -v omni-bench; return; fi
  echo "perf_gate: omni-bench not found: build it (cmake --build build) or set OMNI_BENCH=/path/to/omni-bench" >&2
  exit 2
}

# Runs the benchmark into $1: one point per density, REPEAT runs each.
run_benchmark() {
  "$(find_binary)" sweep --algo "$ALGOS" --nodes "$NODES" --sizes "$SIZE" --density "$DENSITIES" \
    -n "$ITERS" -w "$WARMUP" --repeat "$REPEAT" -J "$1"
}

workdir="$(mktemp -d "${TMPDIR:-/tmp}/perf-gate.XXXXXX")"
trap 'rm -rf "$workdir"' EXIT

if [[ "${1:-}" == "--update" ]]; then
  mkdir -p "$(dirname "$BASELINE")"
  # Written beside the baseline and renamed, so a failed run leaves the old one intact.
  run_benchmark "$workdir/baseline.json"
  mv "$workdir/baseline.json" "$BASELINE"
  echo "perf_gate: wrote $BASELINE; review and commit it"
  exit 0
fi

if [[ ! -f "$BASELINE" ]]; then
  echo "perf_gate: no baseline at $BASELINE: create it with ci/perf_gate.sh --update" >&2
  exit 2
fi
run_benchmark "$workdir/current.json"
"$(find_binary)" compare "$BASELINE" "$workdir/current.json" --metric "$METRICS" --tolerance "$TOLERANCE" \
  --cpu-tolerance "$CPU_TOLERANCE" --cpu-reference "$CPU_REFERENCE" --alpha "$ALPHA" "$@"
