// The --profile block printed under the table (and by `trace summarize`):
// one line per algorithm and size with where the slowest worker's time went,
// CPU time per wire byte and the transport's part of it, under --net
// emulate the link limit, on host
// tensors the memory floor and the call's bound, the CPU time per call
// against ring's, and the share of the call the slowest rank waited for a
// CPU (docs/profiling.md). Lines start with '#', like the
// table's comments.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "tools/record/result_record.h"

namespace omnib {

struct ProfileRow {
  std::string algo;
  uint64_t size_bytes = 0;
  ProfileSummary profile;
  std::optional<double> cpu_ns_per_wire_byte;
  std::optional<double> transport_ns_per_wire_byte;  // the transport's part of it
  std::optional<LinkLimit> link_limit;
  std::optional<double> floor_us;   // the memory floor
  std::optional<double> of_bound;   // max(link limit, floor) / median time
  std::optional<double> cpu_us_per_call;       // all ranks, user + system
  std::optional<double> ring_cpu_us_per_call;  // ring's, when it ran in the same configuration
  std::optional<double> cpu_wait_share;        // the slowest rank's CPU wait over its call time
};

// The rows of a configuration's records that have a profile, each with
// ring's CPU time when ring ran among them.
std::vector<ProfileRow> profile_rows(const std::vector<ResultRecord>& group);

void print_profile_block(std::FILE* out, const std::vector<ProfileRow>& rows);

}  // namespace omnib
