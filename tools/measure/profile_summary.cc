#include "tools/measure/profile_summary.h"

#include <cmath>
#include <map>

namespace omnib {

using nlohmann::json;

std::optional<ProfileSummary> summarize_profile(const std::vector<std::vector<CallProfile>>& workers,
                                                uint64_t dropped_events) {
  // iteration -> (slowest worker, its breakdown), over the calls every worker traced.
  std::map<uint64_t, std::pair<int, CallBreakdown>> slowest;
  std::map<uint64_t, size_t> seen;
  for (size_t r = 0; r < workers.size(); ++r)
    for (const CallProfile& c : workers[r]) {
      ++seen[c.iteration];
      auto it = slowest.find(c.iteration);
      if (it == slowest.end() || c.breakdown.call_us > it->second.second.call_us)
        slowest[c.iteration] = {static_cast<int>(r), c.breakdown};
    }
  ProfileSummary p;
  CallBreakdown sum;
  std::map<int, uint64_t> times_slowest;
  for (const auto& [iteration, who] : slowest) {
    if (seen[iteration] != workers.size()) continue;
    const CallBreakdown& b = who.second;
    ++p.calls;
    ++times_slowest[who.first];
    sum.barrier_us += b.barrier_us;
    sum.call_us += b.call_us;
    sum.compute_us += b.compute_us;
    sum.send_us += b.send_us;
    sum.wait_us += b.wait_us;
    sum.backend_us += b.backend_us;
    sum.other_us += b.other_us;
  }
  if (p.calls == 0) return std::nullopt;
  const double n = static_cast<double>(p.calls);
  p.call_us = sum.call_us / n;
  p.barrier_us = sum.barrier_us / n;
  const double total = sum.total_us();
  if (total > 0) {
    p.compute = sum.compute_us / total;
    p.send = sum.send_us / total;
    p.wait = sum.wait_us / total;
    p.barrier = sum.barrier_us / total;
    p.backend = sum.backend_us / total;
    p.other = sum.other_us / total;
  }
  uint64_t most = 0;
  for (const auto& [rank, count] : times_slowest)
    if (count > most) {
      most = count;
      p.slowest_rank = rank;
    }
  p.dropped_events = dropped_events;
  return p;
}

json call_profiles_to_json(const std::vector<CallProfile>& calls) {
  json out = json::array();
  for (const auto& c : calls) {
    const CallBreakdown& b = c.breakdown;
    out.push_back({c.iteration, b.barrier_us, b.call_us, b.compute_us, b.send_us, b.wait_us, b.backend_us, b.other_us});
  }
  return out;
}

Result<std::vector<CallProfile>> call_profiles_from_json(const json& j, uint64_t timed_calls) {
  if (!j.is_array()) return usage_error("field 'prof': expected an array");
  std::vector<CallProfile> out;
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 8 || !e[0].is_number_unsigned())
      return usage_error("field 'prof': expected [iteration, barrier, call, compute, send, wait, backend, other]");
    double v[7];
    for (size_t i = 0; i < 7; ++i) {
      if (!e[i + 1].is_number() || !std::isfinite(e[i + 1].get<double>()) || e[i + 1].get<double>() < 0)
        return usage_error("field 'prof': times must be non-negative numbers");
      v[i] = e[i + 1].get<double>();
    }
    CallProfile c;
    c.iteration = e[0].get<uint64_t>();
    if (c.iteration >= timed_calls)
      return usage_error("field 'prof': call " + std::to_string(c.iteration) + " is not one of the " +
                         std::to_string(timed_calls) + " timed calls");
    c.breakdown = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    const double parts = v[2] + v[3] + v[4] + v[5] + v[6];
    if (std::abs(parts - v[1]) > 1e-6 * v[1] + 1e-3)
      return usage_error("field 'prof': the parts of call " + std::to_string(c.iteration) + " add up to " +
                         std::to_string(parts) + " us, not its " + std::to_string(v[1]) + " us");
    out.push_back(c);
  }
  return out;
}

}  // namespace omnib
