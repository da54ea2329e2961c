// Where measured memory floors are kept between runs (docs/profiling.md,
// "The memory floor"): one small JSON file per floor, so that a host
// measures each (rank count, size) once. A file holds its key (everything
// that would change the floor: the way it is measured, the host and its CPU,
// the ranks and their threads, the tensor's size and element size), the
// floor, every rank's timed passes and the command line of the run that
// measured it. Files are written atomically (tools/common/atomic_file.h),
// one per key, so ranks of several hosts sharing a home folder never write
// the same file. A file that is missing, damaged, or holds another key is
// no floor: the run measures it again and replaces it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "tools/measure/memory_floor.h"

namespace omnib {

// The folder of the cache, overriding the default.
inline constexpr const char* kFloorCacheVar = "OMNIB_FLOOR_CACHE";

// What a floor depends on.
struct FloorKey {
  std::string host;
  std::string cpu_model;
  int ranks = 1;             // workers making the passes at once on the host
  int threads_per_rank = 1;  // tools/measure/memory_floor.h
  int cpus = 1;              // the host's logical CPUs (host_floor_us)
  uint64_t size_bytes = 0;
  int dtype_bytes = 4;
  bool writes_output = true;  // false in place: the input is only read

  nlohmann::json to_json() const;  // with the method of measuring it
};

// $OMNIB_FLOOR_CACHE, else $XDG_CACHE_HOME/omni-bench/memory-floor, else
// $HOME/.cache/omni-bench/memory-floor; "" when none of them is set.
std::string floor_cache_dir();

// The key's file in `dir`: host, ranks, size and element size in the name
// for whoever looks, and a hash of the whole key.
std::string floor_cache_file(const std::string& dir, const FloorKey& key);

// The floor the file holds for `key`, in microseconds; nullopt when there is
// no such file, or it is not one this build wrote for this key.
std::optional<double> read_cached_floor(const std::string& file, const FloorKey& key);

// What a run measured, for the file.
struct MeasuredFloor {
  double floor_us = 0;
  std::vector<std::vector<PassTime>> passes;  // [worker of the host][repetition]
  std::string command_line;                   // of the run that measured it
};

// Writes the file (its folder made if missing) atomically. A usage error
// that says why when it cannot be written; the floor is then measured again
// by the next run.
Status write_cached_floor(const std::string& file, const FloorKey& key, const MeasuredFloor& floor);

}  // namespace omnib
