#!/usr/bin/env bash
# CI performance gate: runs a small, quick benchmark and judges it against
# results/ci-baseline.json with `omni-bench compare` (docs/ci-gate.md).
#
#   ci/perf_gate.sh [compare options...]   run and compare; exits with compare's code
#                                          (0 pass, 5 regression, 2 usage error)
#   ci/perf_gate.sh --update               regenerate the baseline with the same command
#
# Only metrics that stay stable on a shared 2-core CI machine are gated:
# wire bytes (deterministic), omni's speedup over the other algorithms
# measured within the same run (machine speed cancels out) and correctness.
# Absolute times are not compared.
set -euo pipefail

# --- what the gate measures (change these together with the baseline: --update)
ALGOS="omni,ring,ps"       # comma list: the engine, a dense baseline on the same transport, the engine dense
DENSITIES="0.01 0.1"       # one allreduce run per density
NODES=4
SIZE=4M
ITERS=10
WARMUP=3
REPEAT=1                   # runs per density; more runs give the significance test more samples
METRICS="bytes,speedup,correct"
TOLERANCE="${PERF_GATE_TOLERANCE:-0.5}"   # relative speedup drop allowed: shared 2-core runners swing in-run ratios by 25% and more
ALPHA="${PERF_GATE_ALPHA:-0.01}"          # a speedup drop must also be this significant
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

# Merges result documents into one: the records of every run, the first
# run's context, and each run's command line (less its temporary -J path).
merge_results() {
  local out="$1"; shift
  if command -v jq >/dev/null; then
    jq -s 'map(.command_line |= sub(" -J [^ ]+"; "")) |
           .[0] + {command_line: (map(.command_line) | join(" && ")),
                   runs: map({command_line, configuration}),
                   results: (map(.results) | add)}' "$@" > "$out"
  elif command -v python3 >/dev/null; then
    python3 - "$out" "$@" <<'PY'
import json, re, sys
docs = [json.load(open(p)) for p in sys.argv[2:]]
for d in docs:
    d["command_line"] = re.sub(r" -J [^ ]+", "", d["command_line"], count=1)
merged = dict(docs[0])
merged["command_line"] = " && ".join(d["command_line"] for d in docs)
merged["runs"] = [{"command_line": d["command_line"], "configuration": d["configuration"]} for d in docs]
merged["results"] = [r for d in docs for r in d["results"]]
json.dump(merged, open(sys.argv[1], "w"), indent=2)
PY
  else
    echo "perf_gate: merging result files needs jq or python3: install one of them" >&2
    exit 2
  fi
}

# Runs the benchmark once per density (and repetition) into $1.
run_benchmark() {
  local out="$1" bin parts=() d k part
  bin="$(find_binary)"
  for d in $DENSITIES; do
    for ((k = 0; k < REPEAT; ++k)); do
      part="$workdir/density-$d-run-$k.json"
      "$bin" allreduce --algo "$ALGOS" --nodes "$NODES" -b "$SIZE" -e "$SIZE" \
        -n "$ITERS" -w "$WARMUP" --density "$d" -J "$part"
      parts+=("$part")
    done
  done
  merge_results "$out" "${parts[@]}"
}

workdir="$(mktemp -d "${TMPDIR:-/tmp}/perf-gate.XXXXXX")"
trap 'rm -rf "$workdir"' EXIT

if [[ "${1:-}" == "--update" ]]; then
  mkdir -p "$(dirname "$BASELINE")"
  # Written beside the baseline and renamed, so a failed run leaves the old one intact.
  run_benchmark "$BASELINE.tmp.$$"
  mv "$BASELINE.tmp.$$" "$BASELINE"
  echo "perf_gate: wrote $BASELINE; review and commit it"
  exit 0
fi

if [[ ! -f "$BASELINE" ]]; then
  echo "perf_gate: no baseline at $BASELINE: create it with ci/perf_gate.sh --update" >&2
  exit 2
fi
run_benchmark "$workdir/current.json"
status=0
"$(find_binary)" compare "$BASELINE" "$workdir/current.json" \
  --metric "$METRICS" --tolerance "$TOLERANCE" --alpha "$ALPHA" "$@" || status=$?
exit "$status"
