#include "tools/measure/memory_bound.h"

#include <algorithm>
#include <cstdio>

namespace omnib {

void set_memory_bound(const MemoryFloor& floor, ResultRecord& r) {
  r.memory_floor.reset();
  r.of_bound.reset();
  if (r.skipped || r.time_us.median <= 0) return;
  r.memory_floor = floor;
  const double bound_us = std::max(floor.floor_us, r.link_limit ? r.link_limit->limit_us : 0.0);
  r.of_bound = bound_us / r.time_us.median;
}

std::string beaten_floor(const MemoryFloor& floor, const std::vector<ResultRecord>& group) {
  const ResultRecord* fastest = nullptr;
  for (const auto& r : group)
    if (!r.skipped && r.time_us.min > 0 && (!fastest || r.time_us.min < fastest->time_us.min)) fastest = &r;
  if (!fastest || fastest->time_us.min >= floor.floor_us) return "";
  char text[512];
  std::snprintf(text, sizeof text, "the memory floor of %s (%.3f ms, %s) is above the fastest call (%.3f ms, %s)",
                floor.host.c_str(), floor.floor_us / 1e3, floor.source == kFloorMeasured ? "measured now" : "cached",
                fastest->time_us.min / 1e3, fastest->algo.c_str());
  return text;
}

}  // namespace omnib
