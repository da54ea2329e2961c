// The --profile block printed under the table (and by `trace summarize`):
// one line per algorithm and size with where the slowest worker's time went,
// CPU time per wire byte and, under --net emulate, the link limit
// (docs/profiling.md). Lines start with '#', like the table's comments.
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
  std::optional<LinkLimit> link_limit;
};

// The row of a record that has a profile.
ProfileRow profile_row(const ResultRecord& r);

void print_profile_block(std::FILE* out, const std::vector<ProfileRow>& rows);

}  // namespace omnib
