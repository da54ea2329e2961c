// The memory floor of one configuration of `omni-bench allreduce --profile`
// on host tensors (docs/profiling.md, "The memory floor"), as the ranks
// make it together. It is measured where the calls run: by every worker
// process at once, in the memory its calls use, once the links are up (the
// ranks' threads idle) and before the configuration's inputs are made, so
// outside every timed call. A host whose workers all find its floor in the
// cache (tools/measure/floor_cache.h) takes it from there and measures
// nothing; the workers of the other hosts make the passes
// (tools/measure/memory_floor.h) at once, repetition by repetition, each
// repetition after a barrier of theirs, and each such host's first worker
// makes the host's floor of their times and keeps it in the cache. The
// configuration's floor is the slowest host's: a call ends with its slowest
// worker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/collective/collective.h"
#include "engine/store/store.h"
#include "tools/record/memory_floor.h"
#include "tools/record/result_record.h"

namespace omnib {

struct FloorRun {
  Store& store;
  const JobLayout& job;
  const std::vector<std::string>& hosts;  // every rank's host name, in rank order
  const std::string& command_line;        // kept with a floor this run measures
  bool in_place = false;                  // --inplace: the passes only read (memory_floor.h)
};

// Every rank calls it with the same `name` (store keys of the
// configuration), `size_bytes` and `dtype_bytes`; a worker gives its host
// buffers of at least size_bytes (the input is zeroed), other ranks null.
// Rank 0 gets the floor; the others nullopt.
Result<std::optional<MemoryFloor>> measure_memory_floor(const FloorRun& run, const std::string& name,
                                                        uint64_t size_bytes, int dtype_bytes, void* input,
                                                        void* output);

// Rank 0, once a configuration's calls are measured: a floor that a call
// beat (tools/measure/memory_bound.h) is said on stderr, and its cache file
// removed (when this host sees it), so that the next run measures it again
// rather than keep a floor that is none.
void drop_beaten_floor(const MemoryFloor& floor, const std::vector<ResultRecord>& group);

}  // namespace omnib
