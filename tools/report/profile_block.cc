#include "tools/report/profile_block.h"

namespace omnib {
namespace {

std::optional<double> cpu_per_call(const ResultRecord& r) {
  if (r.skipped || !r.cpu) return std::nullopt;
  return r.cpu->user_us_per_call + r.cpu->sys_us_per_call;
}

ProfileRow profile_row(const ResultRecord& r, const ResultRecord* ring) {
  ProfileRow row;
  row.algo = r.algo;
  row.size_bytes = r.config.size_bytes;
  row.profile = r.profile.value_or(ProfileSummary{});
  if (r.cpu) row.cpu_ns_per_wire_byte = r.cpu->ns_per_wire_byte;
  if (r.cpu) row.transport_ns_per_wire_byte = r.cpu->transport_ns_per_wire_byte;
  row.link_limit = r.link_limit;
  if (r.memory_floor) row.floor_us = r.memory_floor->floor_us;
  row.of_bound = r.of_bound;
  row.cpu_us_per_call = cpu_per_call(r);
  if (ring) row.ring_cpu_us_per_call = cpu_per_call(*ring);
  if (r.cpu) row.cpu_wait_share = r.cpu->wait_share_max();
  return row;
}

}  // namespace

std::vector<ProfileRow> profile_rows(const std::vector<ResultRecord>& group) {
  const ResultRecord* ring = nullptr;
  for (const auto& r : group)
    if (r.algo == "ring" && !r.skipped) ring = &r;
  std::vector<ProfileRow> rows;
  for (const auto& r : group)
    if (r.profile) rows.push_back(profile_row(r, ring));
  return rows;
}

void print_profile_block(std::FILE* out, const std::vector<ProfileRow>& rows) {
  std::fprintf(out, "# profile: shares of the slowest worker's barrier + call time in the traced calls "
                    "(docs/profiling.md)\n");
  std::fprintf(out, "# %11s %-22s %6s %10s", "size(B)", "algo", "calls", "call(ms)");
  for (const auto& [name, field] : profile_shares()) std::fprintf(out, " %8s", name);
  std::fprintf(out, " %9s %9s %9s %8s %9s %8s %12s %7s %8s\n", "cpu/B(ns)", "net/B(ns)", "limit(ms)", "of limit",
               "floor(ms)", "of bound", "cpu/call(ms)", "vs ring", "cpu wait");
  uint64_t dropped = 0;
  for (const ProfileRow& r : rows) {
    std::fprintf(out, "# %11llu %-22s %6llu %10.3f", static_cast<unsigned long long>(r.size_bytes), r.algo.c_str(),
                 static_cast<unsigned long long>(r.profile.calls), r.profile.call_us / 1e3);
    for (const auto& [name, field] : profile_shares()) std::fprintf(out, " %7.1f%%", 100 * (r.profile.*field));
    for (const auto& per_byte : {r.cpu_ns_per_wire_byte, r.transport_ns_per_wire_byte})
      if (per_byte) std::fprintf(out, " %9.2f", *per_byte);
      else std::fprintf(out, " %9s", "-");
    if (r.link_limit) std::fprintf(out, " %9.3f %7.1f%%", r.link_limit->limit_us / 1e3, 100 * r.link_limit->of_limit);
    else std::fprintf(out, " %9s %8s", "-", "-");
    if (r.floor_us) std::fprintf(out, " %9.3f", *r.floor_us / 1e3);
    else std::fprintf(out, " %9s", "-");
    if (r.of_bound) std::fprintf(out, " %7.1f%%", 100 * *r.of_bound);
    else std::fprintf(out, " %8s", "-");
    if (r.cpu_us_per_call) std::fprintf(out, " %12.3f", *r.cpu_us_per_call / 1e3);
    else std::fprintf(out, " %12s", "-");
    if (r.cpu_us_per_call && r.ring_cpu_us_per_call && *r.ring_cpu_us_per_call > 0)
      std::fprintf(out, " %6.2fx", *r.cpu_us_per_call / *r.ring_cpu_us_per_call);
    else std::fprintf(out, " %7s", "-");
    if (r.cpu_wait_share) std::fprintf(out, " %7.1f%%", 100 * *r.cpu_wait_share);
    else std::fprintf(out, " %8s", "-");
    std::fputc('\n', out);
    dropped += r.profile.dropped_events;
  }
  if (dropped > 0)
    std::fprintf(out, "# profile: %llu spans were dropped by full trace buffers, so some time shows as 'other': "
                      "raise --trace-buffer\n", static_cast<unsigned long long>(dropped));
  std::fflush(out);
}

}  // namespace omnib
