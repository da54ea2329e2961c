#!/usr/bin/env bash
# Installs every Debian package omni-bench uses and builds the omni-bench
# program (Release) into build/: the first thing a new user runs. The tests
# (ci/test.sh), the fuzz targets (ci/fuzz.sh) and the microbenchmarks
# (`cmake --build build --target omnib-microbench`, docs/profiling.md) are
# built by what needs them. CUDA and NCCL are optional and picked up from
# /usr/local/cuda when present. Usage: ci/setup.sh [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev googletest libbenchmark-dev
  libgloo-dev libfabric-dev libfabric-bin rdma-core libibverbs-dev libuv1-dev libssl-dev
  iproute2 python3 python3-matplotlib
  # the flow-level network simulator under `omni-bench simulate` (docs/simulation.md)
  libsimgrid-dev
  clang libclang-rt-14-dev
  # real launchers for the launcher tests (tests/launchers/, docs/cluster.md)
  openmpi-bin slurmctld slurmd slurm-client munge
)

# Runs `apt-get ARGS...` quietly: one line saying what it does, apt's own
# output only when it fails.
apt_step() {
  local what=$1 log
  shift
  log=$(mktemp "${TMPDIR:-/tmp}/omnib-setup-apt.XXXXXX")
  echo "setup: $what ..."
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "$@" >"$log" 2>&1; then
    echo "setup: $what failed; apt said:" >&2
    cat "$log" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  start=$SECONDS
  apt_step "updating the package lists" update -q
  noun=packages
  [ ${#missing[@]} -eq 1 ] && noun=package
  # Without an fsync per file: a third faster on a fresh machine (362
  # packages, 2.2 GB: 86 s against 133 s), and a machine that dies mid-way
  # is set up again anyway.
  apt_step "installing ${#missing[@]} $noun" install -y -q --no-install-recommends \
    -o Dpkg::Options::=--force-unsafe-io "${missing[@]}"
  echo "setup: packages installed in $((SECONDS - start)) s"
else
  echo "setup: all ${#packages[@]} packages are installed"
fi

# Through ccache, with paths taken relative to the checkout: the CI gate's
# build of the base revision (ci/gate_base.sh) then reuses every object
# whose source the change left alone.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_BASEDIR=$PWD;ccache" \
  "-DCMAKE_CUDA_COMPILER_LAUNCHER=env;CCACHE_BASEDIR=$PWD;ccache" "$@"
cmake --build build -j "$(nproc)" --target omni-bench
