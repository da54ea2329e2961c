// The run's "resources" block (docs/json-schema.md): every process's
// holdings at its first timed call and at the latest report, summed up per
// role (launcher, worker, aggregator), and the verdict on whether anything
// grew (resource_verdict.h), which the table's footer prints and the soak
// test checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/status.h"
#include "tools/measure/process_resources.h"
#include "tools/measure/resource_verdict.h"

namespace omnib {

// What files before the trend verdict allowed resident memory to move
// between two samples; written still ("rss_allowance_bytes") for their
// readers, judged by nothing.
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
  // The verdict of every size so far, which the footer says. Read from an
  // older file: the file's own flat or grew and its phrases, with no sizes.
  ResourcesVerdict verdict;
};

// Groups the last of `sizes`' processes by role, in the order launcher,
// worker, aggregator, and judges every size. `calls` and `seconds` come from
// rank 0's entry (the first worker entry if there is no rank 0).
ResourcesReport summarize_resources(const std::vector<SizeResources>& sizes, std::string note = "");

// The table's footer line, without the newline: "# resources: " and the
// verdict (verdict_line()), then the note unless something grew.
std::string resources_footer(const ResourcesReport& report);

nlohmann::json to_json(const ResourcesReport& report);
// Reads what to_json wrote, or an older file's block (without the verdict's
// sizes); every field is type-checked.
Result<ResourcesReport> resources_from_json(const nlohmann::json& j);

}  // namespace omnib
