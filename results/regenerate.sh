#!/usr/bin/env bash
# Remakes everything in results/ and plots/ with exactly the commands that
# made it (results/README.md lists them). Needs root: the example study runs
# on emulated links (docs/emulation.md).
#
#   results/regenerate.sh            the example study and its figures, the emulated scaling sweeps,
#                                    the simulation's validation and scaling (below), and the CI baseline
#   results/regenerate.sh --simulation   only the simulation's validation and scaling
#   results/regenerate.sh --simulation-tables   only the calibration and validation tables,
#                                    simulated again from the stored emulated runs (minutes, no root)
#   results/regenerate.sh --check [DIR]    runs the example study twice (into DIR, kept, or a
#                                          temporary folder) and checks that every speedup's
#                                          direction reproduces (results/check_directions.py)
#   results/regenerate.sh --recheck [DIR]  runs it once more and checks the directions of
#                                          results/example-study.json against that run
#   Neither changes anything here.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${OMNI_BENCH:-build/omni-bench}"
[[ -x "$bin" ]] || { echo "regenerate: $bin is missing: build first (ci/setup.sh)" >&2; exit 2; }
# The emulated runs here ran bbr, the default of the host that made them:
# named, so that a host with another default measures the same thing (it
# needs tcp_bbr loaded: 'modprobe tcp_bbr'). They were made before the ranks
# kept their windows across idle time, hence --tcp-idle-restart on (the
# kernel's default). docs/emulation.md, "The ranks' TCP".
rank_tcp=(--tcp-cc bbr --tcp-idle-restart on)

# The example study: omni against the dense and sparse baselines over
# density and node count, on block-sparse, top-k and scattered data, in fp32 and bf16,
# on emulated 1 Gbit/s links so that the network, not this machine's CPU,
# sets the pace. Three whole runs per point.
study() {
  "$bin" sweep --net emulate --link-rate 1gbit --density 0.001,0.01,0.1,0.3,1 --nodes 2,4 \
    --workload blocks,topk,scattered -d float,bf16 \
    --algo omni,ring,ps,tree,gloo-ring-chunked,allgather,sparcml-split,oktopk --sizes 4M -n 10 -w 2 --repeat 3 \
    "${rank_tcp[@]}" -J "$1" "${@:2}"
}

# Scaling at the link's limit: omni with one dedicated aggregator per worker
# on emulated links of rate $1, 2 to 8 workers (up to 16 ranks on this
# machine), beside the algorithms $3 (ring: its time grows towards twice the
# tensor's over the link): omni's time should not grow with the worker
# count. Run at 100 Mbit/s, at 25 Mbit/s and at 10 Mbit/s, where 16 ranks
# leave this machine's two cores mostly idle: what the protocol does when the
# CPU is out of the way. Every point records its CPU-wait share, which the
# time-vs-nodes figure prints beside it.
# These runs are newer than the ranks' window across idle time: they keep
# omni-bench's default (--tcp-idle-restart off) and name bbr, the default of
# the host that made them.
scaling() {
  "$bin" sweep --net emulate --link-rate "$1" --density 0.1 --overlap full --aggregators nodes --nodes 2,4,8 \
    --algo "$3" --sizes 16M -n 5 -w 1 --repeat 3 --tcp-cc bbr -J "$2" "${@:4}"
}

# Cluster scale by simulation (docs/simulation.md). The emulated runs the
# simulation is held against: five algorithms at 2, 4 and 8 workers,
# densities 0.01, 0.1 and 1, at the link rates $1 and size $2, the ranks
# running TCP congestion control $3, into $4; more options after.
validation_runs() {
  "$bin" sweep --link-rate "$1" --nodes 2,4,8 --density 0.01,0.1,1 --algo omni,ring,tree,sparcml-split,allgather \
    --sizes "$2" -n 3 -w 1 --tcp-cc "$3" -J "$4" "${@:5}"
}

# The emulated runs, then the calibration fitted to the 16 MiB runs at 25
# and 100 Mbit/s under this build's TCP defaults (cubic, windows kept across
# idle time), every table simulated with it (the 64 MiB, 50 Mbit/s ones held
# out of the fit; the older bbr and idle-restart runs for comparison), then
# node counts to 1024 on a 100 Gbit/s fat tree (the network alone: this
# host's compute rates say nothing of a cluster's) and its plots. Each
# emulated run is a separate step, so `simulation_tables` alone redoes the
# simulations of the stored runs (minutes) after a change to the model.
simulation_tables() {
  local dir=results/simulation
  "$bin" simulate --calibrate "$dir/calibration.json" --against "$dir/emulated-16M-cubic-no-idle-restart.json" \
    --force > "$dir/validation-16M-cubic-no-idle-restart.txt"
  "$bin" simulate --against "$dir/emulated-64M-50mbit-cubic-no-idle-restart.json" \
    --calibration "$dir/calibration.json" > "$dir/validation-64M-held-out-cubic-no-idle-restart.txt"
  "$bin" simulate --against "$dir/emulated-16M.json" --calibration "$dir/calibration.json" \
    > "$dir/validation-16M.txt"
  "$bin" simulate --against "$dir/emulated-64M-50mbit.json" --calibration "$dir/calibration.json" \
    > "$dir/validation-64M-held-out.txt"
  "$bin" simulate --against "$dir/emulated-16M-cubic.json" --calibration "$dir/calibration.json" \
    > "$dir/validation-16M-cubic.txt"
}

simulation() {
  local dir=results/simulation
  mkdir -p "$dir"
  # Under bbr (this project's host default) with idle restart, as first made.
  validation_runs 25mbit,100mbit 16M bbr "$dir/emulated-16M.json" --tcp-idle-restart on --force
  validation_runs 50mbit 64M bbr "$dir/emulated-64M-50mbit.json" --tcp-idle-restart on --force
  # Under cubic with idle restart: how much of the gap is the congestion control's.
  validation_runs 25mbit,100mbit 16M cubic "$dir/emulated-16M-cubic.json" --tcp-idle-restart on --force
  # This build's defaults: the ranks keep their windows across idle time,
  # so interleaved algorithms no longer slow each other.
  validation_runs 25mbit,100mbit 16M cubic "$dir/emulated-16M-cubic-no-idle-restart.json" --force
  validation_runs 50mbit 64M cubic "$dir/emulated-64M-50mbit-cubic-no-idle-restart.json" --force
  simulation_tables
  "$bin" sweep --simulate --nodes 2,8,64,256,1024 --algo omni,ring,sparcml-split,oktopk --density 0.01,0.1 \
    --sizes 16M --link-rate 100gbit --link-delay 1us --topology fat-tree -J "$dir/scaling-100gbit.json" --force
  rm -rf plots/simulated-scaling-100gbit
  "$bin" plot "$dir/scaling-100gbit.json" -o plots/simulated-scaling-100gbit
}

case "${1:-}" in
  --simulation)
    simulation
    exit 0 ;;
  --simulation-tables)
    simulation_tables
    exit 0 ;;
  --check|--recheck)
    # The studies go into the folder given after the option (kept, to look
    # into), else into a temporary one (removed).
    if [[ -n "${2:-}" ]]; then
      dir="$2"
      mkdir -p "$dir"
    else
      dir="$(mktemp -d "${TMPDIR:-/tmp}/regenerate.XXXXXX")"
      trap 'rm -rf "$dir"' EXIT
    fi
    first=results/example-study.json
    if [[ "$1" == "--check" ]]; then
      first="$dir/first.json"
      study "$first" --force
    fi
    study "$dir/second.json" --force
    /usr/bin/python3 results/check_directions.py "$first" "$dir/second.json"
    exit $? ;;
  "") ;;
  *) echo "regenerate: unknown option '$1' (use --simulation, --check [DIR] or --recheck [DIR])" >&2; exit 2 ;;
esac

study results/example-study.json --force
rm -rf plots/example-study
"$bin" plot results/example-study.json -o plots/example-study
# Ring beside omni at 100 and 25 Mbit/s; at 10 Mbit/s ring's 16 MiB would
# take some 20 minutes, so omni runs alone there.
for point in 100mbit:omni,ring 25mbit:omni,ring 10mbit:omni; do
  rate=${point%%:*}
  scaling "$rate" "results/scaling-$rate.json" "${point#*:}" --force
  rm -rf "plots/scaling-$rate"
  "$bin" plot "results/scaling-$rate.json" -o "plots/scaling-$rate"
done
simulation
ci/perf_gate.sh --update
