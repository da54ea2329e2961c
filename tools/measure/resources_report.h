// The run's "resources" block (docs/json-schema.md): every process's
// holdings at its first timed call and at the latest report, summed up per
// role (launcher, worker, aggregator), and the judgement of whether anything
// grew, which the table's footer prints and the soak test checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "tools/measure/process_resources.h"

namespace omnib {

// Resident memory may move by this much (allocator and page-granular noise)
// and still count as flat; threads and descriptors must not move at all.
inline constexpr uint64_t kRssGrowthAllowance = uint64_t{2} << 20;

// A change of one process between its start and end samples.
struct Growth {
  int64_t change = 0;  // end - start
  int rank = -1;       // whose (-1: the launcher)
};

struct RoleResources {
  std::string role;
  int processes = 0;
  uint64_t peak_rss_bytes = 0;  // the highest VmHWM of the role's processes
  ResourceSample start, end;    // each field the highest over the role's processes (peak_rss_bytes: end's)
  // The largest change (by magnitude) of any one of the role's processes.
  Growth rss_bytes, threads, fds;
};

struct ResourcesReport {
  uint64_t calls = 0;    // collective calls each rank made between the samples
  double seconds = 0;    // between rank 0's samples
  std::vector<RoleResources> roles;  // launcher, worker, aggregator: those that ran
  std::string note;      // e.g. why the launcher is missing
};

// Groups `processes` by role, in the order launcher, worker, aggregator.
// `calls` and `seconds` come from rank 0's entry (the first worker entry if
// there is no rank 0).
ResourcesReport summarize_resources(const std::vector<ProcessResources>& processes, std::string note = "");

// What grew, one phrase per role and resource: "worker rss +12.30 MB (12.9 B
// per call, rank 3)", "aggregator fds +1000 (rank 9)". Empty: flat (resident
// memory within `rss_allowance`, threads and descriptors unchanged).
std::vector<std::string> resource_growth(const ResourcesReport& report, uint64_t rss_allowance = kRssGrowthAllowance);

// The table's footer line, without the newline: "# resources: flat over N
// calls (...)" or "# resources: GREW over N calls: ...".
std::string resources_footer(const ResourcesReport& report);

nlohmann::json to_json(const ResourcesReport& report);
// Reads what to_json wrote; every field is type-checked.
Result<ResourcesReport> resources_from_json(const nlohmann::json& j);

}  // namespace omnib
