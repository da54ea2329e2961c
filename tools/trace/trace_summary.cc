#include "tools/trace/trace_summary.h"

#include <algorithm>
#include <map>

#include "tools/measure/profile_summary.h"

namespace omnib {
namespace {

struct Group {
  std::string algo;
  uint64_t size_bytes = 0;
  std::vector<std::vector<CallProfile>> workers;
  std::vector<std::pair<double, const TracedCall*>> calls;  // (slowest worker's time, call)
};

// A step's lane as the trace names it.
std::string lane_name(const TraceDocument& doc, const PathStep& st) {
  const auto& names = doc.ranks[static_cast<size_t>(st.rank)].thread_names;
  auto it = names.find(st.span->thread);
  return it != names.end() ? it->second : "thread " + std::to_string(st.span->thread);
}

}  // namespace

Result<TraceSummary> summarize_trace(const TraceDocument& doc, std::optional<uint64_t> iteration) {
  std::vector<bool> worker;
  TraceSummary out;
  for (const auto& r : doc.ranks) {
    worker.push_back(r.worker);
    out.dropped_events += r.dropped;
    out.max_clock_error_ns = std::max(out.max_clock_error_ns, r.clock.error_ns);
  }
  const std::vector<TracedCall> calls = calls_of(doc);
  if (calls.empty()) return usage_error("the trace holds no traced call");
  std::vector<Group> groups;
  std::map<std::pair<std::string, uint64_t>, size_t> index;
  for (const TracedCall& call : calls) {
    auto [it, fresh] = index.emplace(std::make_pair(call.algo, call.size_bytes), groups.size());
    if (fresh) groups.push_back({call.algo, call.size_bytes, std::vector<std::vector<CallProfile>>(worker.size()), {}});
    Group& g = groups[it->second];
    double slowest = 0;
    for (size_t r = 0; r < call.ranks.size(); ++r) {
      if (!call.ranks[r] || !worker[r]) continue;
      auto b = break_down_call(call.ranks[r]->spans);
      if (!b.is_ok())
        return b.status().with_context(call.algo + " call " + std::to_string(call.iteration) + ", rank " +
                                       std::to_string(r) + ": ");
      g.workers[r].push_back({call.iteration, b.value()});
      slowest = std::max(slowest, b.value().call_us);
    }
    g.calls.push_back({slowest, &call});
  }
  for (Group& g : groups) {
    // Ranks that are not workers have no calls to charge.
    std::vector<std::vector<CallProfile>> workers;
    for (size_t r = 0; r < worker.size(); ++r)
      if (worker[r]) workers.push_back(std::move(g.workers[r]));
    auto p = summarize_profile(workers, 0);
    if (!p) return usage_error(g.algo + ": no call was traced on every worker");
    ProfileRow row;
    row.algo = g.algo;
    row.size_bytes = g.size_bytes;
    row.profile = *p;
    out.rows.push_back(row);

    const TracedCall* chosen = nullptr;
    if (iteration) {
      for (const auto& [t, c] : g.calls)
        if (c->iteration == *iteration) chosen = c;
      if (!chosen)
        return usage_error(g.algo + " has no traced call " + std::to_string(*iteration) + " in this trace");
    } else {
      auto by_time = g.calls;
      std::sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      chosen = by_time[(by_time.size() - 1) / 2].second;
    }
    out.paths.push_back({g.algo, g.size_bytes, chosen->iteration,
                         critical_path(*chosen, worker, out.max_clock_error_ns)});
  }
  return out;
}

void print_trace_summary(std::FILE* out, const TraceSummary& s, const TraceDocument& doc) {
  std::fprintf(out, "# trace of %zu ranks; clocks aligned to rank 0 within %.1f us; %llu spans dropped\n",
               doc.ranks.size(), static_cast<double>(s.max_clock_error_ns) / 1e3,
               static_cast<unsigned long long>(s.dropped_events));
  print_profile_block(out, s.rows);
  for (const CallPathReport& p : s.paths) {
    const CriticalPath& c = p.path;
    std::fprintf(out, "#\n# critical path of %s, %llu bytes, call %llu: %.3f ms from rank %d's start (%.3f ms after "
                      "the first rank's) to rank %d's end; its spans explain %.1f%% of it\n",
                 p.algo.c_str(), static_cast<unsigned long long>(p.size_bytes),
                 static_cast<unsigned long long>(p.iteration), c.call_us() / 1e3, c.start_rank,
                 c.entry_skew_us / 1e3, c.end_rank, 100 * c.coverage());
    std::fprintf(out, "# %5s %-32s %10s %7s  %s\n", "rank", "lane", "path(ms)", "share", "spans on the path");
    // Consecutive steps on one lane make one line.
    for (size_t i = 0; i < c.steps.size();) {
      size_t j = i;
      double us = 0;
      std::vector<std::pair<std::string, int>> names;  // in order of first appearance, with counts
      while (j < c.steps.size() && c.steps[j].rank == c.steps[i].rank &&
             c.steps[j].span->thread == c.steps[i].span->thread) {
        const std::string& name = c.steps[j].span->name;
        auto it = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == name; });
        if (it == names.end()) names.push_back({name, 1});
        else ++it->second;
        us += c.steps[j++].critical_us;
      }
      std::string spans;
      for (const auto& [name, count] : names)
        spans += (spans.empty() ? "" : ", ") + name + (count > 1 ? " x" + std::to_string(count) : "");
      std::fprintf(out, "# %5d %-32s %10.3f %6.1f%%  %s\n", c.steps[i].rank, lane_name(doc, c.steps[i]).c_str(),
                   us / 1e3, c.call_us() > 0 ? 100 * us / c.call_us() : 0.0, spans.c_str());
      i = j;
    }
  }
  std::fflush(out);
}

}  // namespace omnib
