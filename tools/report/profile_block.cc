#include "tools/report/profile_block.h"

namespace omnib {

ProfileRow profile_row(const ResultRecord& r) {
  ProfileRow row;
  row.algo = r.algo;
  row.size_bytes = r.config.size_bytes;
  row.profile = r.profile.value_or(ProfileSummary{});
  if (r.cpu) row.cpu_ns_per_wire_byte = r.cpu->ns_per_wire_byte;
  row.link_limit = r.link_limit;
  return row;
}

void print_profile_block(std::FILE* out, const std::vector<ProfileRow>& rows) {
  std::fprintf(out, "# profile: shares of the slowest worker's barrier + call time in the traced calls "
                    "(docs/profiling.md)\n");
  std::fprintf(out, "# %11s %-22s %6s %10s", "size(B)", "algo", "calls", "call(ms)");
  for (const auto& [name, field] : profile_shares()) std::fprintf(out, " %8s", name);
  std::fprintf(out, " %9s %9s %8s\n", "cpu/B(ns)", "limit(ms)", "of limit");
  uint64_t dropped = 0;
  for (const ProfileRow& r : rows) {
    std::fprintf(out, "# %11llu %-22s %6llu %10.3f", static_cast<unsigned long long>(r.size_bytes), r.algo.c_str(),
                 static_cast<unsigned long long>(r.profile.calls), r.profile.call_us / 1e3);
    for (const auto& [name, field] : profile_shares()) std::fprintf(out, " %7.1f%%", 100 * (r.profile.*field));
    if (r.cpu_ns_per_wire_byte) std::fprintf(out, " %9.2f", *r.cpu_ns_per_wire_byte);
    else std::fprintf(out, " %9s", "-");
    if (r.link_limit) std::fprintf(out, " %9.3f %7.1f%%", r.link_limit->limit_us / 1e3, 100 * r.link_limit->of_limit);
    else std::fprintf(out, " %9s %8s", "-", "-");
    std::fputc('\n', out);
    dropped += r.profile.dropped_events;
  }
  if (dropped > 0)
    std::fprintf(out, "# profile: %llu spans were dropped by full trace buffers, so some time shows as 'other': "
                      "raise --trace-buffer\n", static_cast<unsigned long long>(dropped));
  std::fflush(out);
}

}  // namespace omnib
