#!/usr/bin/env bash
# A one-node Slurm cluster on this host, for as long as a command runs:
# starts munged, slurmctld and slurmd (each in the foreground with -D, in the
# background of this script), waits until the node is idle, runs the command
# with SLURM_CONF pointing at the cluster (so that srun, sinfo and sbatch
# reach it), then stops the daemons and removes everything it made.
#
#   ci/slurm_single_node.sh COMMAND [ARGS...]   exits with COMMAND's code
#
# Everything lives in a fresh folder (config, munge key and socket, state,
# spool, logs) on ports chosen free, so several clusters can run side by side
# and nothing of the host's own Slurm or munge is used or touched. No cgroups:
# processes are tracked by /proc (proctrack/linuxproc, task/none), and the
# node declares SLURM_SINGLE_NODE_CPUS CPUs (default 8) whatever the host has
# (SlurmdParameters=config_overrides), so `srun -n 4` runs on 2 cores.
# Needs root (slurmd starts tasks as their user) and the Debian packages
# slurmctld, slurmd, slurm-client and munge (ci/setup.sh installs them).
#
# When a daemon cannot start, it says which, why (the end of its log), and
# exits 1: a test run through this script fails; it is never skipped.
set -euo pipefail

if [ $# -eq 0 ]; then
  echo "usage: ci/slurm_single_node.sh COMMAND [ARGS...]" >&2
  exit 2
fi
cpus=${SLURM_SINGLE_NODE_CPUS:-8}
start_limit=${SLURM_SINGLE_NODE_START_LIMIT:-30}  # seconds for the node to become idle

fail() {
  echo "slurm_single_node: $*" >&2
  exit 1
}

for tool in munged munge slurmctld slurmd srun sinfo scontrol python3; do
  command -v "$tool" >/dev/null || fail "$tool is not installed: run ci/setup.sh (Debian: munge, slurmctld, slurmd, slurm-client)"
done
[ "$(id -u)" -eq 0 ] || fail "must run as root (slurmd starts every task as its user; this script runs it as root)"

dir=$(mktemp -d "${TMPDIR:-/tmp}/slurm-single-node.XXXXXX")
# munged insists that every folder above its socket can be searched by all.
chmod 755 "$dir"
mkdir -p "$dir/munge-socket" "$dir/munge-key" "$dir/state" "$dir/spool"
chmod 700 "$dir/munge-key"
pids=()

stop_daemons() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  # Each has 10 s to stop, then is killed; none outlives the script.
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do if kill -0 "$pid" 2>/dev/null; then alive=1; fi; done
    if [ $alive -eq 0 ]; then break; fi
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap stop_daemons EXIT

# The end of a daemon's logs, indented, for a failure message.
log_tail() {
  local f
  for f in "$dir/$1".out "$dir/$1".log; do
    [ -s "$f" ] && { echo "  $f:"; tail -n 15 "$f" | sed 's/^/    /'; }
  done
  return 0
}

# Fails, saying why, unless process $1 (daemon $2) is still running.
expect_running() {
  kill -0 "$1" 2>/dev/null && return 0
  local code=0
  wait "$1" || code=$?
  fail "$2 exited (code $code) right after it started; its log:
$(log_tail "$2")"
}

# Two loopback ports nothing listens on now (slurmctld's and slurmd's).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

# --- munge: a fresh key and a private socket
head -c 1024 /dev/urandom >"$dir/munge-key/munge.key"
chmod 400 "$dir/munge-key/munge.key"
socket="$dir/munge-socket/munge.socket"
munged -F --socket="$socket" --key-file="$dir/munge-key/munge.key" --pid-file="$dir/munged.pid" \
  --seed-file="$dir/munge-key/seed" --log-file="$dir/munged.log" >"$dir/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
  [ -S "$socket" ] && break
  expect_running "${pids[0]}" munged
  sleep 0.1
done
munge -n --socket="$socket" | unmunge --socket="$socket" >/dev/null 2>"$dir/unmunge.err" ||
  fail "munged does not answer on $socket: $(cat "$dir/unmunge.err"); its log:
$(log_tail munged)"

# --- slurm.conf: one node, no cgroups, no accounting. The node is named
# after this host, as on a real cluster, so that a job script can use the
# names in SLURM_JOB_NODELIST as host names.
host=$(hostname -s)
export SLURM_CONF="$dir/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=single
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=single Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

# --- the daemons, in the foreground (-D) of background jobs
slurmctld -D -i >"$dir/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$host" >"$dir/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq $((start_limit * 5))); do
  expect_running "${pids[1]}" slurmctld
  expect_running "${pids[2]}" slurmd
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
if [ "$state" != idle ]; then
  fail "the node is not idle ${start_limit} s after start (state: ${state:-none; sinfo cannot reach slurmctld}); the logs:
$(log_tail slurmctld)
$(log_tail slurmd)"
fi

code=0
"$@" || code=$?
exit $code
