#include "tests/support/trace_checks.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "tools/trace/critical_path.h"

namespace omnib::testing {
namespace {

std::string where(const TracedCall& c, size_t rank) {
  return c.algo + " size " + std::to_string(c.size_bytes) + " call " + std::to_string(c.iteration) + " rank " +
         std::to_string(rank);
}

const SpanRecord* find_kind(const CallSpans& c, trace::Kind kind) {
  for (const auto& s : c.spans)
    if (s.kind == kind) return &s;
  return nullptr;
}

}  // namespace

std::vector<std::string> check_nesting(const TraceDocument& doc) {
  std::vector<std::string> problems;
  for (const RankTrace& rank : doc.ranks) {
    int64_t previous_end = 0;
    for (const CallSpans& call : rank.calls) {
      const std::string at = call.algo + " call " + std::to_string(call.iteration) + " rank " + std::to_string(rank.rank);
      const SpanRecord* c = find_kind(call, trace::Kind::kCall);
      const SpanRecord* b = find_kind(call, trace::Kind::kBarrier);
      if (!c || !b) {
        problems.push_back(at + ": no call or no barrier span");
        continue;
      }
      if (b->end_ns > c->begin_ns) problems.push_back(at + ": the barrier ends after the call begins");
      if (b->begin_ns < previous_end) problems.push_back(at + ": begins before the previous call ended");
      previous_end = c->end_ns;
      std::map<int, std::vector<const SpanRecord*>> lanes;
      for (const auto& s : call.spans) {
        if (&s == c || &s == b) continue;
        if (s.begin_ns < c->begin_ns || s.end_ns > c->end_ns)
          problems.push_back(at + ": span '" + s.name + "' lies outside the call span");
        lanes[s.thread].push_back(&s);
      }
      for (auto& [thread, spans] : lanes) {
        // By begin, longer first: a parent precedes what it holds.
        std::stable_sort(spans.begin(), spans.end(), [](const SpanRecord* x, const SpanRecord* y) {
          return x->begin_ns != y->begin_ns ? x->begin_ns < y->begin_ns : x->end_ns > y->end_ns;
        });
        std::vector<const SpanRecord*> open;
        for (const SpanRecord* s : spans) {
          while (!open.empty() && open.back()->end_ns <= s->begin_ns) open.pop_back();
          if (!open.empty() && s->end_ns > open.back()->end_ns)
            problems.push_back(at + " thread " + std::to_string(thread) + ": span '" + s->name + "' overlaps '" +
                               open.back()->name + "' without nesting in it");
          open.push_back(s);
        }
      }
    }
  }
  return problems;
}

std::vector<std::string> check_call_times(const TraceDocument& doc, const nlohmann::json& results, double tolerance) {
  std::vector<std::string> problems;
  for (const TracedCall& call : calls_of(doc)) {
    double longest = 0;
    for (size_t r = 0; r < call.ranks.size(); ++r)
      if (call.ranks[r] && doc.ranks[r].worker)
        if (const SpanRecord* c = find_kind(*call.ranks[r], trace::Kind::kCall))
          longest = std::max(longest, c->duration_us());
    const nlohmann::json* record = nullptr;
    for (const auto& rec : results["results"])
      if (rec["algo"] == call.algo && rec["config"]["size_bytes"] == call.size_bytes) record = &rec;
    const std::string at = call.algo + " size " + std::to_string(call.size_bytes) + " call " +
                           std::to_string(call.iteration);
    if (!record || call.iteration >= (*record)["samples_us"].size()) {
      problems.push_back(at + ": no measured time in the results");
      continue;
    }
    const double measured = (*record)["samples_us"][call.iteration].get<double>();
    if (std::abs(longest - measured) > tolerance * measured)
      problems.push_back(at + ": call span " + std::to_string(longest) + " us, measured " + std::to_string(measured) +
                         " us");
  }
  return problems;
}

std::vector<std::string> check_critical_paths(const TraceDocument& doc, double min_coverage, double may_stall,
                                              const std::set<std::string>& host_bound) {
  std::vector<std::string> problems;
  std::vector<bool> worker;
  int64_t tolerance = 0;
  for (const auto& r : doc.ranks) {
    worker.push_back(r.worker);
    tolerance = std::max(tolerance, r.clock.error_ns);
  }
  struct PerAlgo {
    size_t calls = 0;
    std::vector<std::string> short_paths;
    bool exchanges = false;  // some rank received from another
    bool crosses = false;    // some path went from one rank to another
  };
  std::map<std::pair<std::string, uint64_t>, PerAlgo> algos;
  for (const TracedCall& call : calls_of(doc)) {
    PerAlgo& algo = algos[{call.algo, call.size_bytes}];
    ++algo.calls;
    // Found here on its own: the worker whose call ended last, and its last span.
    int last_rank = -1;
    int64_t last_end = 0;
    for (size_t r = 0; r < call.ranks.size(); ++r) {
      if (!call.ranks[r] || !worker[r]) continue;
      const SpanRecord* c = find_kind(*call.ranks[r], trace::Kind::kCall);
      if (c && (last_rank < 0 || c->end_ns > last_end)) {
        last_rank = static_cast<int>(r);
        last_end = c->end_ns;
      }
      for (const auto& s : call.ranks[r]->spans)
        algo.exchanges |= s.kind == trace::Kind::kRecv && s.args.peer >= 0 && s.args.peer != static_cast<int>(r);
    }
    const CriticalPath p = critical_path(call, worker, tolerance);
    const std::string at = where(call, static_cast<size_t>(std::max(last_rank, 0)));
    if (p.steps.empty() || last_rank < 0) {
      problems.push_back(at + ": no critical path");
      continue;
    }
    const SpanRecord* last_leaf = nullptr;
    for (const auto& s : call.ranks[static_cast<size_t>(last_rank)]->spans)
      if (s.kind != trace::Kind::kCall && s.kind != trace::Kind::kBarrier && s.kind != trace::Kind::kPhase &&
          s.end_ns <= last_end && (!last_leaf || s.end_ns > last_leaf->end_ns))
        last_leaf = &s;
    if (p.steps.back().rank != last_rank || p.steps.back().span != last_leaf)
      problems.push_back(at + ": the path does not end with the last span of the last worker to finish");
    for (size_t i = 1; i < p.steps.size(); ++i) {
      if (p.steps[i - 1].span->begin_ns > p.steps[i].span->end_ns + tolerance)
        problems.push_back(at + ": step " + std::to_string(i) + " ('" + p.steps[i].span->name +
                           "') ends before the step it follows begins");
      algo.crosses |= p.steps[i].rank != p.steps[i - 1].rank;
    }
    const PathStep& first = p.steps.front();
    for (const auto& s : call.ranks[static_cast<size_t>(first.rank)]->spans)
      if ((s.kind == trace::Kind::kCompute || s.kind == trace::Kind::kSend || s.kind == trace::Kind::kRecv ||
           s.kind == trace::Kind::kBackend) &&
          &s != first.span && s.end_ns <= first.span->begin_ns) {  // a point span ends where it begins
        problems.push_back(at + ": the path stops at '" + first.span->name + "' on rank " +
                           std::to_string(first.rank) + ", after '" + s.name + "' there had ended");
        break;
      }
    if (p.coverage() < min_coverage && !host_bound.count(call.algo))
      algo.short_paths.push_back(at + ": the path's spans explain " + std::to_string(100 * p.coverage()) +
                                 "% of the call");
  }
  for (const auto& [key, algo] : algos) {
    if (algo.short_paths.size() > static_cast<size_t>(may_stall * static_cast<double>(algo.calls)))
      problems.insert(problems.end(), algo.short_paths.begin(), algo.short_paths.end());
    if (algo.exchanges && !algo.crosses)
      problems.push_back(key.first + ": no call's path crosses from one rank to another");
  }
  return problems;
}

std::vector<std::string> check_bytes_balance(const TraceDocument& doc) {
  std::vector<std::string> problems;
  for (const TracedCall& call : calls_of(doc)) {
    std::map<std::tuple<int, int, int>, int64_t> balance;  // (from, to, shard) -> sent - received
    for (size_t r = 0; r < call.ranks.size(); ++r) {
      if (!call.ranks[r]) continue;
      const int rank = static_cast<int>(r);
      for (const auto& s : call.ranks[r]->spans) {
        const auto bytes = static_cast<int64_t>(s.args.bytes);
        if (s.kind == trace::Kind::kSend && s.args.peer >= 0) balance[{rank, s.args.peer, s.args.shard}] += bytes;
        if (s.kind == trace::Kind::kRecv && s.args.peer >= 0) balance[{s.args.peer, rank, s.args.shard}] -= bytes;
      }
    }
    for (const auto& [link, left] : balance)
      if (left != 0)
        problems.push_back(call.algo + " call " + std::to_string(call.iteration) + ": rank " +
                           std::to_string(std::get<0>(link)) + " -> rank " + std::to_string(std::get<1>(link)) +
                           " (shard " + std::to_string(std::get<2>(link)) + ") leaves " + std::to_string(left) +
                           " bytes in flight");
  }
  return problems;
}

}  // namespace omnib::testing
