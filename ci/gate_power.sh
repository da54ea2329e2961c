#!/usr/bin/env bash
# How sharp the CI performance gate is, measured against today's code: runs
# ci/perf_gate.sh with this checkout's build as the base (PERF_GATE_BASE_BENCH)
# and, as the candidate, the same build (each failure a false alarm) or the
# test suite's sabotage build with omni broken in one way (each pass a miss):
#
#   unmodified   build/omni-bench itself                    PASSES runs
#   slow-1.25    omni sleeps after each call 0.25 times     CATCHES runs each
#   slow-1.5       as long as the call took, 0.5 times,
#   slow-2         1 time: 1.25x, 1.5x, 2x as slow as its own code
#   noop         omni writes and sends nothing
#   dense        omni sends every block, zero blocks included (the ps protocol)
#   double-cpu   omni burns after each call as much CPU as the call used
#
#   ci/gate_power.sh [PASSES [CATCHES]]    defaults: 20 and 10
#
# Prints, per candidate, how many runs failed and on what (algorithm, metric
# and density of each failing comparison), the power each run printed (the
# smallest slowdown of omni it would have failed: median and worst), and how
# long the runs took. GATE_POWER_ONLY="unmodified slow-1.5" runs only those.
# Needs a build with tests (build/tests/). Writes each run's log to
# ${GATE_POWER_LOGS:-${TMPDIR:-/tmp}/gate-power}/NAME-K.log.
set -uo pipefail
cd "$(dirname "$0")/.."

passes="${1:-20}"
catches="${2:-10}"
logs="${GATE_POWER_LOGS:-${TMPDIR:-/tmp}/gate-power}"
base=build/omni-bench
sabotage=build/tests/omni-bench-sabotage
[[ -x "$base" ]] || { echo "gate_power: $base is missing: build it (cmake --build build)" >&2; exit 2; }
[[ -x "$sabotage" ]] || { echo "gate_power: $sabotage is missing: build with tests" >&2; exit 2; }
mkdir -p "$logs"

# "omni median time @0.01, ..." : what failed in one gate log.
failed_on() {
  sed -nE 's/^#   .* density ([0-9.]+) .*\| ([a-z0-9-]+) ([^:]+):.*(REGRESSION|CHANGED)$/\2 \3 @\1/p' "$1" |
    sort -u | paste -sd, -
}

# "median 1.12x, worst 1.19x" over the power lines of the logs given.
power_summary() {
  grep -hoE '^perf_gate: power: ([0-9.]+x|NONE)' "$@" | awk '{print $3}' | sort -n |
    awk '{v[NR] = $1} END {if (NR == 0) {print "no power printed"; exit}
         printf "power median %s, worst %s", v[int((NR + 1) / 2)], v[NR]}'
}

# Runs the gate $2 times with candidate $1 (env assignments in $3...); prints a tally.
tally() {
  local name="$1" times="$2" k code failed=0 on seconds=()
  shift 2
  [[ -n "${GATE_POWER_ONLY:-}" && " $GATE_POWER_ONLY " != *" $name "* ]] && return
  declare -A what=()
  for ((k = 0; k < times; ++k)); do
    local log="$logs/$name-$k.log" start=$SECONDS
    env PERF_GATE_BASE_BENCH="$base" "$@" ci/perf_gate.sh >"$log" 2>&1
    code=$?
    seconds+=($((SECONDS - start)))
    if [[ $code -ne 0 ]]; then
      failed=$((failed + 1))
      on="$(failed_on "$log")"
      [[ $code -eq 3 ]] && on="wrong results (exit 3)"
      what["${on:-exit $code}"]=$(( ${what["${on:-exit $code}"]:-0} + 1 ))
    fi
  done
  local took
  took="$(printf '%s\n' "${seconds[@]}" | sort -n | awk '{v[NR] = $1} END {printf "%d-%d s, median %d s", v[1], v[NR], v[int((NR + 1) / 2)]}')"
  printf '%-11s failed %2d of %2d; %s; runs took %s' "$name" "$failed" "$times" \
    "$(power_summary "$logs/$name"-*.log)" "$took"
  for key in "${!what[@]}"; do printf '; [%s]: %d' "$key" "${what[$key]}"; done
  printf '\n'
}

echo "gate_power: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, logs in $logs"
tally unmodified "$passes" OMNI_BENCH="$base"
for f in 1.25 1.5 2; do
  tally "slow-$f" "$catches" OMNI_BENCH="$sabotage" OMNIB_SABOTAGE_OMNI=sleep OMNIB_SABOTAGE_SLOWDOWN="$f"
done
tally noop "$catches" OMNI_BENCH="$sabotage" OMNIB_SABOTAGE_OMNI=noop
tally dense "$catches" OMNI_BENCH="$sabotage" OMNIB_SABOTAGE_OMNI=dense
tally double-cpu "$catches" OMNI_BENCH="$sabotage" OMNIB_SABOTAGE_OMNI=double-cpu
echo "gate_power: done $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
