#!/usr/bin/env bash
# How sharp the CI performance gate is, measured: runs ci/perf_gate.sh on the
# unmodified build PASSES times, and on each deliberately broken omni of the
# test suite's sabotage build (tests/sabotage/sabotage_collectives.h) CATCHES
# times, and prints how often each run failed and on what.
#
#   ci/gate_power.sh [PASSES [CATCHES]]    defaults: 20 and 10
#
# The sleep sabotage sleeps, after every omni call, as long as the baseline's
# median omni call at density 0.01 took (its first omni record), so that omni
# becomes about twice as slow. Needs a build with tests (build/tests/).
# Writes the gate logs to ${GATE_POWER_LOGS:-/tmp/gate-power}.
set -uo pipefail
cd "$(dirname "$0")/.."

passes="${1:-20}"
catches="${2:-10}"
logs="${GATE_POWER_LOGS:-/tmp/gate-power}"
baseline="${PERF_GATE_BASELINE:-results/ci-baseline.json}"
sabotage=build/tests/omni-bench-sabotage
[[ -x "$sabotage" ]] || { echo "gate_power: $sabotage is missing: build with tests" >&2; exit 2; }
mkdir -p "$logs"

sleep_us=$(/usr/bin/python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
print(int(next(r["time_us"]["median"] for r in doc["results"] if r["algo"] == "omni")))' "$baseline")

# Runs the gate $2 times as $1 (env assignments in $3...); prints a tally.
tally() {
  local name="$1" times="$2" k code failed=0 on
  shift 2
  declare -A what=()
  for ((k = 0; k < times; ++k)); do
    env "$@" ci/perf_gate.sh >"$logs/$name-$k.log" 2>&1
    code=$?
    if [[ $code -ne 0 ]]; then
      failed=$((failed + 1))
      on=$(grep -oE "(wire bytes|wire frames|speedup vs [a-z]+|cpu ns/wire byte|cpu/byte over [a-z]+.s|correct)[^|]*(REGRESSION|CHANGED)" \
             "$logs/$name-$k.log" | sed -E 's/ +[-+0-9.]+[^ ]* .*//; s/ +[0-9].*//; s/:$//' | sort -u | paste -sd, -)
      [[ $code -eq 3 ]] && on="wrong results (exit 3)"
      what["${on:-exit $code}"]=$(( ${what["${on:-exit $code}"]:-0} + 1 ))
    fi
  done
  printf '%-12s failed %2d of %2d' "$name" "$failed" "$times"
  for key in "${!what[@]}"; do printf '; %s: %d' "$key" "${what[$key]}"; done
  printf '\n'
}

echo "gate_power: $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), sleep ${sleep_us} us"
tally unmodified "$passes" OMNI_BENCH=build/omni-bench
tally noop "$catches" OMNI_BENCH="$sabotage" OMNIB_SABOTAGE_OMNI=noop
tally dense "$catches" OMNI_BENCH="$sabotage" OMNIB_SABOTAGE_OMNI=dense
tally double-cpu "$catches" OMNI_BENCH="$sabotage" OMNIB_SABOTAGE_OMNI=double-cpu
tally sleep "$catches" OMNI_BENCH="$sabotage" OMNIB_SABOTAGE_OMNI=sleep OMNIB_SABOTAGE_SLEEP_US="$sleep_us"
