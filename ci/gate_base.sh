# Sourced by ci/perf_gate.sh: the base revision's omni-bench, built once per
# revision into a cache outside the checkout, which it never touches (the
# base's source is a shared clone in a temporary folder, removed after).
#
#   base_binary REF   prints the path of REF's omni-bench on stdout, building
#                     it when the cache lacks it; status 0, 10 when REF is not
#                     in this clone (a shallow clone, a first commit, no git:
#                     the caller falls back to the baseline file), 1 when the
#                     base's build failed (its log is kept and named).
#   keep_candidate BIN  caches BIN as the build of HEAD when it is a clean build
#                     of HEAD: the next commit's gate then finds its base built.
#
# PERF_GATE_BASE_BENCH=/path/to/omni-bench   use this build as the base (no git, no cache)
# OMNIB_GATE_CACHE     the cache, one folder per full revision hash
#                      (default ${XDG_CACHE_HOME:-$HOME/.cache}/omni-bench/gate)
# PERF_GATE_BASE_CMAKE_ARGS   extra cmake arguments of the base's build
# PERF_GATE_KEEP_BUILDS       builds the cache keeps, newest first (default 8)

gate_cache_root() { echo "${OMNIB_GATE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omni-bench/gate}"; }

# Whether $1 is an omni-bench that starts here (a cache copied from another
# system may hold one whose libraries are missing).
runnable() { [[ -x "$1" ]] && "$1" --version >/dev/null 2>&1; }

# Builds revision $1's omni-bench (tests and benchmarks off) into folder $2,
# which appears whole or not at all.
build_revision() {
  local rev="$1" dest="$2" tmp log start=$SECONDS
  tmp="$(mktemp -d "$(dirname "$dest")/.build-${rev:0:12}.XXXXXX")"
  log="$tmp/build.log"
  local generator=() launcher=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  echo "perf_gate: building the base ${rev:0:12} (omni-bench only) into $dest" >&2
  # The build folder sits in the source as build/ does in a checkout, and
  # ccache sees paths relative to the source: the base's compile commands
  # are then those of an earlier build of the same files, which ccache reuses.
  # shellcheck disable=SC2086  # PERF_GATE_BASE_CMAKE_ARGS is a list of arguments
  if git clone -q --shared --no-checkout "$(git rev-parse --show-toplevel)" "$tmp/src" >>"$log" 2>&1 &&
     git -C "$tmp/src" checkout -q --detach "$rev" >>"$log" 2>&1 &&
     cmake -S "$tmp/src" -B "$tmp/src/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DOMNIB_BUILD_TESTS=OFF \
       -DOMNIB_BUILD_BENCHMARKS=OFF "${launcher[@]}" ${PERF_GATE_BASE_CMAKE_ARGS:-} >>"$log" 2>&1 &&
     CCACHE_BASEDIR="$tmp/src" cmake --build "$tmp/src/build" -j "$(nproc)" --target omni-bench >>"$log" 2>&1 &&
     mkdir "$tmp/out" && cp "$tmp/src/build/omni-bench" "$tmp/out/" && mv -T "$tmp/out" "$dest"; then
    rm -rf "$tmp"
    echo "perf_gate: built the base in $((SECONDS - start)) s" >&2
    return 0
  fi
  local kept
  kept="$(dirname "$dest")/${rev}.build-failed.log"
  mv "$log" "$kept"
  rm -rf "$tmp"
  tail -n 15 "$kept" >&2
  echo "perf_gate: the base ${rev:0:12} did not build (log: $kept); to gate against the committed baseline" \
       "file instead, run ci/perf_gate.sh --against-file" >&2
  return 1
}

base_binary() {
  local ref="$1" rev root dir
  if [[ -n "${PERF_GATE_BASE_BENCH:-}" ]]; then
    runnable "$PERF_GATE_BASE_BENCH" || { echo "perf_gate: PERF_GATE_BASE_BENCH=$PERF_GATE_BASE_BENCH does not run" >&2; return 1; }
    echo "perf_gate: base: $PERF_GATE_BASE_BENCH (PERF_GATE_BASE_BENCH)" >&2
    echo "$PERF_GATE_BASE_BENCH"
    return 0
  fi
  if ! rev="$(git rev-parse --verify --quiet "${ref}^{commit}" 2>/dev/null)"; then
    echo "perf_gate: the base revision '$ref' is not in this clone (a shallow clone, a first commit, or no" \
         "git checkout): cannot run the A/B gate. Fetch the history (git fetch --deepen=1; on GitHub Actions" \
         "actions/checkout with fetch-depth: 2) or name a base: --base REV or PERF_GATE_BASE=REV." >&2
    return 10
  fi
  root="$(gate_cache_root)"
  dir="$root/$rev"
  mkdir -p "$root"
  # One build per revision at a time: a second gate waits for the first's.
  exec 9>"$root/$rev.lock"
  flock -w 3600 9 || { echo "perf_gate: waited an hour for another build of $rev ($root/$rev.lock)" >&2; return 1; }
  if [[ -d "$dir" ]] && ! runnable "$dir/omni-bench"; then
    echo "perf_gate: the cached base $dir/omni-bench does not run here: rebuilding it" >&2
    rm -rf "$dir"
  fi
  if [[ -d "$dir" ]]; then
    echo "perf_gate: base ${rev:0:12} ($ref): cached build $dir/omni-bench" >&2
  else
    build_revision "$rev" "$dir" || return 1
    prune_cache "$root"
  fi
  echo "$dir/omni-bench"
}

# Keeps the newest PERF_GATE_KEEP_BUILDS (default 8) builds of the cache.
prune_cache() {
  local root="$1" keep="${PERF_GATE_KEEP_BUILDS:-8}" old
  while read -r old; do
    [[ -n "$old" ]] && rm -rf "$old" "${old%/}.lock"
  done < <(ls -1dt "$root"/*/ 2>/dev/null | tail -n +$((keep + 1)))
}

# Keeps the candidate $1 as the cached build of the checkout's HEAD when it
# is one (its --version names HEAD's revision, not "-dirty"), so that the next
# commit's gate finds its base built.
keep_candidate() {
  local bin="$1" rev version root tmp
  rev="$(git rev-parse --verify --quiet HEAD 2>/dev/null)" || return 0
  version="$("$bin" --version 2>/dev/null)" || return 0
  [[ "$version" == *"(${rev:0:12})"* ]] || return 0
  root="$(gate_cache_root)"
  [[ -d "$root/$rev" ]] && return 0
  mkdir -p "$root" && tmp="$(mktemp -d "$root/.keep-${rev:0:12}.XXXXXX")" || return 0
  if cp "$bin" "$tmp/omni-bench" && mv -T "$tmp" "$root/$rev" 2>/dev/null; then
    echo "perf_gate: kept this build as the next commit's base: $root/$rev/omni-bench" >&2
    prune_cache "$root"
  else
    rm -rf "$tmp"
  fi
}
