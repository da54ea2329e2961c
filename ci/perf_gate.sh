#!/usr/bin/env bash
# CI performance gate (docs/ci-gate.md): runs this checkout's omni-bench (the
# candidate) and its base revision's, in turns on this host, and judges the
# pairs with `omni-bench compare --paired`.
#
#   ci/perf_gate.sh [--base REV] [compare options...]
#        A/B against REV (default $PERF_GATE_BASE, else HEAD^: the previous
#        commit), built once into a cache outside the checkout. Exits with
#        compare's code (0 pass, 5 regression), the benchmark's own (3 wrong
#        results, 4 timeout, ...), or 2 (a binary missing, the base's build failed).
#   ci/perf_gate.sh --against-file [compare options...]
#        judge one sweep against the committed results/ci-baseline.json instead
#        (what the gate falls back to, saying so, when the base cannot be found).
#   ci/perf_gate.sh --update
#        regenerate results/ci-baseline.json with the file gate's sweep.
#
# What is gated, and why it holds on a shared 2-core runner:
# - correctness: every call of every algorithm is checked; a wrong call fails
#   the benchmark itself (exit 3) before any comparison;
# - wire bytes and frames: exact for a given seed, compared exactly (fewer
#   than the base pass as IMPROVED: the base is the previous commit, not a file
#   to refresh);
# - omni's time and CPU per wire byte: PAIRS runs of each build, each run
#   every density, in the order A B B A A B ...; run i of the base pairs with
#   run i of the candidate, so the host's speed and load at that moment cancel
#   in the pair's ratio. A change fails when the median pair ratio is worse
#   than its tolerance allows and a Wilcoxon signed-rank test on the ratios
#   finds it significant at ALPHA. The gate prints its power: the smallest
#   slowdown of omni it would have failed, from the spread of the pairs.
set -euo pipefail

# --- the A/B benchmark (both builds run it: use options the base accepts too)
ALGOS="omni,ring,ps"       # the engine, a dense baseline on the same transport, the engine dense
DENSITIES="0.01,0.1"
NODES=4
SIZE=4M
AB_ITERS="${PERF_GATE_ITERS:-20}"
AB_WARMUP=3
PAIRS="${PERF_GATE_PAIRS:-12}"                    # runs of each build; 5 is the least a test can judge at 0.05
MIN_PAIRS="${PERF_GATE_MIN_PAIRS:-8}"             # ...but past BUDGET seconds, stop after this many
BUDGET="${PERF_GATE_BUDGET:-240}"                 # seconds of runs (a loaded host slows every run)
# Timing is judged on omni alone: its time, whose pair ratios scatter least
# under load (speedups add ring's and ps's scatter), and its CPU per byte.
AB_METRICS="bytes,frames,time,cpu,correct"
AB_TIMING_OF=omni
AB_TOLERANCE="${PERF_GATE_TOLERANCE:-0.20}"       # median pair ratio of omni's time above 1.20...
AB_CPU_TOLERANCE="${PERF_GATE_CPU_TOLERANCE:-0.25}"
ALPHA="${PERF_GATE_ALPHA:-0.05}"                  # ...and significant: 12 pairs reach p = 0.00024

# --- the file gate, against the committed baseline (change with --update)
FILE_ITERS=10
FILE_WARMUP=3
FILE_REPEAT=5                                     # whole runs per density: the samples of every test
FILE_METRICS="bytes,frames,speedup,cpu,correct"
FILE_TOLERANCE="${PERF_GATE_FILE_TOLERANCE:-0.25}"
FILE_CPU_TOLERANCE="${PERF_GATE_FILE_CPU_TOLERANCE:-0.25}"
CPU_REFERENCE=ring
BASELINE="${PERF_GATE_BASELINE:-results/ci-baseline.json}"

cd "$(dirname "$0")/.."
source ci/gate_base.sh

say() { echo "perf_gate: $*" >&2; }

# The gate's power, from compare's verdicts $1 over $2 pairs: the smallest
# slowdown of the subject that its time or its speedup over the best dense
# algorithm would have failed, per density, and the worst over densities.
print_power() {
  python3 - "$1" "$2" <<'PY' >&2 || say "power not computed (python3 missing?)"
import json, sys
doc, pairs = json.load(open(sys.argv[1])), sys.argv[2]
subject = doc["rules"]["subject"]
per = {}
for c in doc["comparisons"]:
    if c["algo"] != subject:
        continue
    d = c["detectable"]
    if c["metric"] == "time":
        name, slowdown = "time", None if d is None else 1 + d
    elif c["metric"] == "speedup" and c.get("against") == "best dense":
        name, slowdown = "speedup vs best dense", None if d is None else 1 / (1 - d)
    else:
        continue
    per.setdefault(c["configuration"]["density"], []).append((name, slowdown))
print(f"perf_gate: power: the smallest slowdown of {subject} this run would have failed, from the spread of its {pairs} pairs:")
worst = 0.0
for density, items in sorted(per.items()):
    found = [s for _, s in items if s is not None]
    detail = "; ".join(f"{n} {'none' if s is None else f'{s:.3f}x'}" for n, s in items)
    if not found:
        worst = None
        print(f"perf_gate:   density {density}: NONE ({detail}): too few pairs, or too much spread")
        continue
    print(f"perf_gate:   density {density}: {min(found):.3f}x ({detail})")
    if worst is not None:
        worst = max(worst, min(found))
if worst is None or not per:
    print(f"perf_gate: power: NONE: this run could not have failed every density's slowdown of {subject}")
else:
    print(f"perf_gate: power: {worst:.3f}x: {subject} {100 * (worst - 1):.1f}% slower at every density would have failed")
PY
}

# The candidate: $OMNI_BENCH, else build/omni-bench, else omni-bench on PATH.
find_binary() {
  if [[ -n "${OMNI_BENCH:-}" ]]; then echo "$OMNI_BENCH"; return; fi
  if [[ -x build/omni-bench ]]; then echo build/omni-bench; return; fi
  if command -v omni-bench >/dev/null; then command -v omni-bench; return; fi
  say "omni-bench not found: build it (cmake --build build) or set OMNI_BENCH=/path/to/omni-bench"
  exit 2
}

# The file gate's sweep into $1, with binary $2.
file_sweep() {
  "$2" sweep --algo "$ALGOS" --nodes "$NODES" --sizes "$SIZE" --density "$DENSITIES" \
    -n "$FILE_ITERS" -w "$FILE_WARMUP" --repeat "$FILE_REPEAT" -J "$1"
}

# One A/B run: binary $2 into $work/$1.json, its output into $work/$1.log.
# A failing run ends the gate with its code, naming the side.
ab_run() {
  local name="$1" bin="$2" start=$SECONDS code=0
  "$bin" sweep --algo "$ALGOS" --nodes "$NODES" --sizes "$SIZE" --density "$DENSITIES" \
    -n "$AB_ITERS" -w "$AB_WARMUP" --repeat 1 -J "$work/$name.json" >"$work/$name.log" 2>&1 || code=$?
  if [[ $code -ne 0 ]]; then
    tail -n 20 "$work/$name.log" >&2
    say "run '$name' ($bin) failed with exit $code; its output: $work/$name.log"
    exit "$code"
  fi
  printf ' %s %ds' "$name" $((SECONDS - start)) >&2
}

# PAIRS runs of each build, in the order A B B A A B ...: neither build always
# runs first, so an order effect (a cache the first run warms) cancels too.
# On a host so loaded that another pair would end past BUDGET seconds, it
# stops early, though never before MIN_PAIRS. Sets `pairs` to the pairs run.
ab_runs() {
  local start=$SECONDS pair_start last=0
  for ((pairs = 0; pairs < PAIRS; )); do
    if ((pairs >= MIN_PAIRS && SECONDS - start + last > BUDGET)); then
      say "stopped after $pairs pairs: another would end past ${BUDGET} s (PERF_GATE_BUDGET)"
      break
    fi
    pair_start=$SECONDS
    printf 'perf_gate: pair %d/%d:' $((pairs + 1)) "$PAIRS" >&2
    if ((pairs % 2 == 0)); then ab_run "base-$pairs" "$1"; ab_run "candidate-$pairs" "$2"
    else ab_run "candidate-$pairs" "$2"; ab_run "base-$pairs" "$1"; fi
    printf '\n' >&2
    last=$((SECONDS - pair_start))
    pairs=$((pairs + 1))
  done
}

# Comma list of $work/$1-0.json ... $work/$1-(pairs-1).json.
run_files() {
  local i list=""
  for ((i = 0; i < pairs; ++i)); do list+="${list:+,}$work/$1-$i.json"; done
  echo "$list"
}

# The A/B gate: base binary $1, candidate $2, compare options after.
ab_gate() {
  local base_bin="$1" candidate="$2" code=0
  shift 2
  say "A/B: $PAIRS runs of each build in turns, $AB_ITERS iterations each, densities $DENSITIES"
  ab_runs "$base_bin" "$candidate"
  "$candidate" compare --paired "$(run_files base)" "$(run_files candidate)" --metric "$AB_METRICS" \
    --timing-of "$AB_TIMING_OF" --tolerance "$AB_TOLERANCE" --cpu-tolerance "$AB_CPU_TOLERANCE" --alpha "$ALPHA" \
    --accept-improvements --json "$verdicts" "$@" || code=$?
  [[ -f "$verdicts" ]] && print_power "$verdicts" "$pairs"
  return "$code"
}

file_gate() {
  local candidate="$1"
  shift
  if [[ ! -f "$BASELINE" ]]; then
    say "no baseline at $BASELINE: create it with ci/perf_gate.sh --update"
    exit 2
  fi
  file_sweep "$work/current.json" "$candidate"
  "$candidate" compare "$BASELINE" "$work/current.json" --metric "$FILE_METRICS" --tolerance "$FILE_TOLERANCE" \
    --cpu-tolerance "$FILE_CPU_TOLERANCE" --cpu-reference "$CPU_REFERENCE" --alpha "$ALPHA" --json "$verdicts" "$@"
}

# --- options
mode=ab
base_ref="${PERF_GATE_BASE:-HEAD^}"
compare_args=()
verdicts=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --update) mode=update ;;
    --against-file) mode=file ;;
    --base) [[ $# -ge 2 ]] || { say "--base needs a revision, e.g. --base origin/main"; exit 2; }
            base_ref="$2"; shift ;;
    --json) [[ $# -ge 2 ]] || { say "--json needs a file name"; exit 2; }
            verdicts="$2"; shift ;;
    *) compare_args+=("$1") ;;
  esac
  shift
done

# PERF_GATE_WORKDIR keeps the runs' files and logs (CI artifacts); else a
# temporary folder, removed at the end.
if [[ -n "${PERF_GATE_WORKDIR:-}" ]]; then
  work="$PERF_GATE_WORKDIR"
  mkdir -p "$work"
  [[ -z "$(ls -A "$work")" ]] || { say "PERF_GATE_WORKDIR=$work is not empty: give an empty or new folder"; exit 2; }
else
  work="$(mktemp -d "${TMPDIR:-/tmp}/perf-gate.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
fi
verdicts="${verdicts:-$work/verdicts.json}"
candidate="$(find_binary)"
started=$SECONDS

if [[ "$mode" == update ]]; then
  mkdir -p "$(dirname "$BASELINE")"
  # Written beside the baseline and renamed, so a failed run leaves the old one intact.
  file_sweep "$work/baseline.json" "$candidate"
  mv "$work/baseline.json" "$BASELINE"
  say "wrote $BASELINE; review and commit it"
  exit 0
fi

if [[ "$mode" == ab ]]; then
  base_code=0
  base_bin="$(base_binary "$base_ref")" || base_code=$?
  if [[ $base_code -eq 0 ]]; then
    code=0
    ab_gate "$base_bin" "$candidate" "${compare_args[@]}" || code=$?
    keep_candidate "$candidate"
    say "done in $((SECONDS - started)) s (exit $code)"
    exit "$code"
  fi
  # base_binary said why; 10 is "no such revision here": fall back, loudly.
  [[ $base_code -eq 10 ]] || exit 2
  say "FALLING BACK to the committed baseline file $BASELINE: a regression that a speedup since it was"
  say "made hides goes unseen"
fi
code=0
file_gate "$candidate" "${compare_args[@]}" || code=$?
say "judged against $BASELINE, not against the base revision; done in $((SECONDS - started)) s (exit $code)"
exit "$code"
