// The memory floor of a configuration (docs/profiling.md, "The memory
// floor"): the time no allreduce can avoid on these hosts, whatever its
// algorithm, since every worker reads its whole input once and writes its
// whole output once (in place, only the read is unavoidable), and the
// workers of a host share its memory bandwidth.
// The run measures it (tools/allreduce/rank_floor.h) or takes it from an
// earlier run's cache file (tools/measure/floor_cache.h); a record carries
// it, and how it was obtained, with --profile on host tensors.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/base/status.h"

namespace omnib {

struct MemoryFloor {
  // The slowest host's floor: the least, over repetitions, of the time its
  // slowest worker would take, had nothing else run on the host, to read
  // one input and write one output (in place: only to read it) while every
  // worker of the host did the same (tools/measure/memory_floor.h).
  double floor_us = 0;
  std::string source;  // kFloorMeasured or kFloorFromCache
  // The parameters that made it (the cache key, tools/measure/floor_cache.h).
  std::string host;          // the host whose floor this is: the slowest
  std::string cpu_model;     // /proc/cpuinfo's model name
  int ranks = 0;             // workers that made the passes at once on that host
  int threads_per_rank = 1;  // threads each of them made them with
  int cpus = 1;              // that host's logical CPUs
  uint64_t size_bytes = 0;   // tensor bytes per rank
  int dtype_bytes = 4;
  bool writes_output = true;  // false in place: a sparse sum need not write
  int repetitions = 0;
  std::string cache_file;  // where the floor is kept; "" when it could not be written
};

inline constexpr const char* kFloorMeasured = "measured";
inline constexpr const char* kFloorFromCache = "cache";

nlohmann::json memory_floor_json(const MemoryFloor& f);
// Every field type-checked (the error names it); `source` must be one of the two.
Result<MemoryFloor> memory_floor_from_json(const nlohmann::json& j);

}  // namespace omnib
