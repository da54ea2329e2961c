#include "tools/measure/rank_samples.h"

#include <algorithm>

#include "tools/common/json_fields.h"
#include "tools/net/link_shaper.h"
#include "tools/common/stats.h"
#include "engine/transport/transport_cpu.h"

namespace omnib {

using nlohmann::json;

namespace {

json counters_json(const ByteCounters& c) { return json::array({c.sent, c.frames_sent}); }

Status read_pair(const json& j, const char* name, uint64_t& a, uint64_t& b) {
  const json& v = j[name];
  if (!v.is_array() || v.size() != 2 || !v[0].is_number_unsigned() || !v[1].is_number_unsigned())
    return usage_error(std::string("field '") + name + "': expected two non-negative integers");
  a = v[0].get<uint64_t>();
  b = v[1].get<uint64_t>();
  return Status::ok();
}

}  // namespace

json RankSamples::to_json() const {
  json cpu_runs = json::array();
  for (const auto& c : cpu) cpu_runs.push_back({c.user_us, c.sys_us, c.wait_us, c.preemptions, c.transport_us});
  json wrong_calls = json::array();
  for (const auto& [call, n] : wrong) wrong_calls.push_back({call, n});
  return json{{"t", times_us},
              {"cpu", cpu_runs},
              {"wrong", wrong_calls},
              {"checked", calls_checked},
              {"wire", wire ? counters_json(*wire) : json(nullptr)},
              {"link", link_bytes ? json(*link_bytes) : json(nullptr)},
              {"retx", link_retransmits ? json(*link_retransmits) : json(nullptr)},
              {"prof", call_profiles_to_json(profile)},
              {"dropped", dropped_events},
              {"routes", routes}};
}

Result<RankSamples> RankSamples::from_json(const json& j, int runs, int iters) {
  if (!j.is_object()) return usage_error("samples: expected an object");
  RankSamples s(runs);
  const json& t = j.contains("t") ? j["t"] : json();
  if (!t.is_array() || t.size() != static_cast<size_t>(runs))
    return usage_error("field 't': expected " + std::to_string(runs) + " runs of call times");
  for (size_t r = 0; r < t.size(); ++r) {
    json wrapper = {{"t", t[r]}};
    OMNIB_RETURN_IF_ERROR(read_field(wrapper, "t", s.times_us[r]));
    // Dedicated aggregators time nothing; workers time every iteration.
    if (!s.times_us[r].empty() && s.times_us[r].size() != static_cast<size_t>(iters))
      return usage_error("field 't': run " + std::to_string(r) + " holds " + std::to_string(s.times_us[r].size()) +
                         " times, not " + std::to_string(iters));
  }
  const json& cpu = j.contains("cpu") ? j["cpu"] : json();
  if (!cpu.is_array() || cpu.size() != static_cast<size_t>(runs))
    return usage_error("field 'cpu': expected " + std::to_string(runs) + " runs");
  for (size_t r = 0; r < cpu.size(); ++r) {
    const json& c = cpu[r];
    if (!c.is_array() || c.size() != 5 || !c[0].is_number() || !c[1].is_number() || !c[2].is_number() ||
        !c[3].is_number() || !c[4].is_number())
      return usage_error(
          "field 'cpu': expected [user, system, wait] microseconds, preemptions and transport microseconds per run");
    s.cpu[r] = {c[0].get<double>(), c[1].get<double>(), c[2].get<double>(), c[3].get<double>(), c[4].get<double>()};
  }
  const json& wrong = j.contains("wrong") ? j["wrong"] : json();
  if (!wrong.is_array()) return usage_error("field 'wrong': expected an array");
  for (const auto& w : wrong) {
    json wrapper = {{"wrong", w}};
    uint64_t call = 0, n = 0;
    OMNIB_RETURN_IF_ERROR(read_pair(wrapper, "wrong", call, n));
    s.wrong[call] = n;
  }
  OMNIB_RETURN_IF_ERROR(read_field(j, "checked", s.calls_checked));
  if (j.contains("wire") && !j["wire"].is_null()) {
    ByteCounters c;
    OMNIB_RETURN_IF_ERROR(read_pair(j, "wire", c.sent, c.frames_sent));
    s.wire = c;
  }
  if (j.contains("link") && !j["link"].is_null()) {
    uint64_t link = 0;
    OMNIB_RETURN_IF_ERROR(read_field(j, "link", link));
    s.link_bytes = link;
  }
  if (j.contains("retx") && !j["retx"].is_null()) {
    uint64_t retransmits = 0;
    OMNIB_RETURN_IF_ERROR(read_field(j, "retx", retransmits));
    s.link_retransmits = retransmits;
  }
  if (j.contains("prof")) {
    auto profile = call_profiles_from_json(j["prof"], static_cast<uint64_t>(runs) * static_cast<uint64_t>(iters));
    if (!profile.is_ok()) return profile.status();
    s.profile = profile.take();
  }
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "dropped", s.dropped_events));
  if (j.contains("routes")) OMNIB_RETURN_IF_ERROR(read_field(j, "routes", s.routes));
  return s;
}

void WrongTally::add(const WrongTally& other) {
  calls += other.calls;
  elements += other.elements;
  if (other.first && (!first || *other.first < *first)) first = other.first;
}

WrongTally tally_wrong(const std::vector<RankSamples>& ranks) {
  std::map<uint64_t, uint64_t> by_call;
  for (const RankSamples& s : ranks)
    for (const auto& [call, n] : s.wrong) by_call[call] += n;
  WrongTally t;
  t.calls = by_call.size();
  for (const auto& [call, n] : by_call) t.elements += n;
  if (!by_call.empty()) t.first = by_call.begin()->first;
  return t;
}

void combine_rank_samples(const RecordFrame& f, const std::vector<RankSamples>& ranks, ResultRecord& out) {
  out.iters = f.iters;
  out.warmup = f.warmup;
  out.repeat = f.repeat;
  // Iteration i of run k took as long as its slowest worker.
  std::vector<std::vector<double>> times(static_cast<size_t>(f.repeat), std::vector<double>(f.iters, 0.0));
  for (int rank = 0; rank < f.nodes && rank < static_cast<int>(ranks.size()); ++rank)
    for (size_t k = 0; k < times.size(); ++k)
      for (size_t i = 0; i < ranks[rank].times_us[k].size(); ++i)
        times[k][i] = std::max(times[k][i], ranks[rank].times_us[k][i]);
  out.samples_us.clear();
  for (const auto& run : times) out.samples_us.insert(out.samples_us.end(), run.begin(), run.end());
  out.time_us = summarize(out.samples_us);
  out.runs.clear();
  for (const auto& run : times) out.runs.push_back(RunSummary{median_of(run), 0, std::nullopt});
  combine_rank_counters(f, ranks, std::vector<uint64_t>(static_cast<size_t>(f.repeat), static_cast<uint64_t>(f.iters)),
                        tally_wrong(ranks), out);
}

namespace {

// Wire and link bytes (and frames) per timed call: the busiest rank's and
// all ranks'; absent when some rank could not count them.
void combine_traffic(const std::vector<RankSamples>& ranks, double calls, ResultRecord& out) {
  bool have_wire = !ranks.empty(), have_link = !ranks.empty(), have_retransmits = !ranks.empty();
  double sent_max = 0, sent_total = 0, frames_max = 0, frames_total = 0, link_max = 0, link_total = 0;
  double retransmits = 0;
  for (const RankSamples& s : ranks) {
    have_wire &= s.wire.has_value();
    have_link &= s.link_bytes.has_value();
    have_retransmits &= s.link_retransmits.has_value();
    if (s.link_retransmits) retransmits += static_cast<double>(*s.link_retransmits) / calls;
    if (s.wire) {
      sent_max = std::max(sent_max, static_cast<double>(s.wire->sent) / calls);
      sent_total += static_cast<double>(s.wire->sent) / calls;
      frames_max = std::max(frames_max, static_cast<double>(s.wire->frames_sent) / calls);
      frames_total += static_cast<double>(s.wire->frames_sent) / calls;
    }
    if (s.link_bytes) {
      link_max = std::max(link_max, static_cast<double>(*s.link_bytes) / calls);
      link_total += static_cast<double>(*s.link_bytes) / calls;
    }
  }
  if (have_wire) {
    out.wire_sent_per_rank_max = sent_max;
    out.wire_sent_total = sent_total;
    out.wire_frames_per_rank_max = frames_max;
    out.wire_frames_total = frames_total;
  }
  if (have_link) {
    out.link_sent_per_rank_max = link_max;
    out.link_sent_total = link_total;
  }
  if (have_retransmits) out.link_retransmits_per_call = retransmits;
}

// CPU time of all ranks per timed call, whole and run by run, and per wire byte.
void combine_cpu(const std::vector<RankSamples>& ranks, const std::vector<uint64_t>& run_calls, double calls,
                 ResultRecord& out) {
  CpuTime cpu_total;
  double cpu_rank_max = 0, preemptions_max = 0;
  std::vector<double> run_cpu(run_calls.size(), 0.0);
  CpuUsage cpu;
  // A rank's CPU wait as a share of the time the calls took (the slowest
  // rank's, summed over the timed calls).
  const double call_time_us = out.time_us.mean * calls;
  for (const RankSamples& s : ranks) {
    CpuTime rank_cpu;
    for (size_t k = 0; k < s.cpu.size() && k < run_cpu.size(); ++k) {
      rank_cpu += s.cpu[k];
      run_cpu[k] += s.cpu[k].total_us();
    }
    cpu_total += rank_cpu;
    cpu_rank_max = std::max(cpu_rank_max, rank_cpu.total_us() / calls);
    preemptions_max = std::max(preemptions_max, rank_cpu.preemptions / calls);
    cpu.wait_share_per_rank.push_back(call_time_us > 0 ? std::max(0.0, rank_cpu.wait_us) / call_time_us : 0.0);
  }
  if (!cpu_wait_measured()) cpu.wait_share_per_rank.clear();
  cpu.user_us_per_call = cpu_total.user_us / calls;
  cpu.sys_us_per_call = cpu_total.sys_us / calls;
  cpu.rank_max_us_per_call = cpu_rank_max;
  cpu.preemptions_per_call_max = std::max(0.0, preemptions_max);
  const bool bytes_moved = out.wire_sent_total && *out.wire_sent_total > 0;
  if (bytes_moved) cpu.ns_per_wire_byte = (cpu_total.total_us() / calls) * 1e3 / *out.wire_sent_total;
  // Only where the bytes crossed our transport: a baseline with its own
  // (Gloo, NCCL) counts none, and our idle network thread is not its cost.
  if (transport_cpu_accounting() && bytes_moved) {
    cpu.transport_us_per_call = cpu_total.transport_us / calls;
    cpu.transport_ns_per_wire_byte = *cpu.transport_us_per_call * 1e3 / *out.wire_sent_total;
  }
  out.cpu = cpu;
  for (size_t k = 0; k < out.runs.size() && k < run_calls.size(); ++k) {
    RunSummary& run = out.runs[k];
    run.cpu_us_per_call = run_cpu[k] / static_cast<double>(std::max<uint64_t>(run_calls[k], 1));
    run.cpu_ns_per_wire_byte.reset();
    if (bytes_moved) run.cpu_ns_per_wire_byte = run.cpu_us_per_call * 1e3 / *out.wire_sent_total;
  }
}

// The emulated link's limit: the least time the bytes the busiest rank put
// on its link take at the link's rate.
void set_link_limit(const RecordFrame& f, ResultRecord& out) {
  out.link_limit.reset();
  if (!out.link_sent_per_rank_max || f.config.link_rate_bps == 0 || out.time_us.median <= 0) return;
  LinkLimit limit;
  // The shaper's bucket lets its burst through at once after the barrier's
  // idle time, so the link allows the call that much less than bytes/rate:
  // a call can never beat this limit.
  const double burst = static_cast<double>(token_bucket_for(f.config.link_rate_bps, LinkEnd::kRank).burst_bytes);
  const double shaped = std::max(0.0, *out.link_sent_per_rank_max - burst);
  limit.limit_us = shaped * 8 / static_cast<double>(f.config.link_rate_bps) * 1e6;
  limit.of_limit = limit.limit_us / out.time_us.median;
  out.link_limit = limit;
}

// The workers' traced calls (--profile), summarized.
void combine_profile(const RecordFrame& f, const std::vector<RankSamples>& ranks, ResultRecord& out) {
  std::vector<std::vector<CallProfile>> workers;
  uint64_t dropped = 0;
  bool traced = false;
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    dropped += ranks[rank].dropped_events;
    traced |= !ranks[rank].profile.empty();
    if (static_cast<int>(rank) < f.nodes) workers.push_back(ranks[rank].profile);
  }
  out.profile = traced ? summarize_profile(workers, dropped) : std::nullopt;
}

}  // namespace

void combine_rank_counters(const RecordFrame& f, const std::vector<RankSamples>& ranks,
                           const std::vector<uint64_t>& run_calls, const WrongTally& wrong, ResultRecord& out) {
  uint64_t timed_calls = 0;
  for (uint64_t n : run_calls) timed_calls += n;
  const double calls = static_cast<double>(std::max<uint64_t>(timed_calls, 1));  // timed calls per rank
  combine_traffic(ranks, calls, out);
  combine_cpu(ranks, run_calls, calls, out);
  out.checked = f.checked;
  out.calls_checked = ranks.empty() ? 0 : ranks.front().calls_checked;
  // Every rank takes the same route (engine/omni/route_choice.h): rank 0 tells.
  out.routes = ranks.empty() ? std::map<std::string, uint64_t>{} : ranks.front().routes;
  out.wrong_elements = wrong.elements;
  out.wrong_calls = wrong.calls;
  out.first_wrong_call = wrong.first;
  if (f.checked)
    out.correct = out.wrong_calls == 0;
  else
    out.correct.reset();
  set_link_limit(f, out);
  combine_profile(f, ranks, out);
}

}  // namespace omnib
