#include "tools/measure/resource_verdict.h"

#include <algorithm>
#include <cmath>

#include "tools/common/size_parse.h"

namespace omnib {
namespace {

constexpr const char* kRoles[] = {kLauncherRole, kWorkerRole, kAggregatorRole};

std::string signed_bytes(double b) { return (b < 0 ? "-" : "+") + format_bytes(std::abs(b)); }

std::string whose(int rank, uint64_t size_bytes) {
  return (rank >= 0 ? "rank " + std::to_string(rank) + ", " : std::string()) + "size " + format_size(size_bytes);
}

// The points whose memory the trend is fitted to: the later half of the
// size's rounds (kMinRssPoints says why), and of those only the ones
// after the rounds whose spans --trace keeps (those grow by what the trace
// holds, not by a leak).
std::vector<TrendPoint> rss_points(const ProcessResources& p, uint64_t traced_rounds) {
  std::vector<TrendPoint> out;
  if (traced_rounds == kAllRoundsTraced) return out;
  const uint64_t first = std::max(p.rounds / 2, traced_rounds > 0 ? traced_rounds - 1 : 0);
  for (const ResourcePoint& point : p.series)
    if (point.round >= first) out.push_back({static_cast<double>(point.round), static_cast<double>(point.rss_bytes)});
  return out;
}

bool rss_grew(const TrendSlope& fit) { return fit.low > 0 && fit.slope >= kMinRssSlope; }

std::string rss_phrase(const RssTrend& t, uint64_t size_bytes) {
  return t.role + " rss " + signed_bytes(t.fit.slope) + " per call over " + std::to_string(t.rounds) + " calls (" +
         signed_bytes(t.fit.slope * static_cast<double>(t.rounds)) + "; " + whose(t.rank, size_bytes) + ")";
}

std::string count_phrase(const CountChange& c, const char* what, uint64_t rounds, uint64_t size_bytes) {
  return c.role + " " + what + " +" + std::to_string(c.change) + " over " + std::to_string(rounds) + " calls (" +
         whose(c.rank, size_bytes) + ")";
}

void keep_larger(CountChange& into, const ProcessResources& p, int64_t change) {
  if (into.role.empty() || change > into.change) into = {p.role, p.rank, change};
}

// Judges one role's processes of a size; adds what grew to `v`.
void judge_role(const char* role, const SizeResources& size, SizeVerdict& v) {
  std::optional<RssTrend> steepest_grown;
  CountChange threads, fds;
  for (const ProcessResources& p : size.processes) {
    if (p.role != role || p.series.empty()) continue;
    keep_larger(threads, p, static_cast<int64_t>(p.end.threads) - static_cast<int64_t>(p.series.front().threads));
    keep_larger(fds, p, static_cast<int64_t>(p.end.fds) - static_cast<int64_t>(p.series.front().fds));
    const std::vector<TrendPoint> points = rss_points(p, size.traced_rounds);
    if (points.size() < kMinRssPoints) continue;
    RssTrend trend{p.role, p.rank, fit_trend(points), p.rounds};
    if (!v.rss || trend.fit.slope > v.rss->fit.slope) v.rss = trend;
    if (rss_grew(trend.fit) && (!steepest_grown || trend.fit.slope > steepest_grown->fit.slope))
      steepest_grown = trend;
  }
  if (steepest_grown) v.grew.push_back(rss_phrase(*steepest_grown, size.size_bytes));
  if (threads.change > 0) v.grew.push_back(count_phrase(threads, "threads", v.rounds, size.size_bytes));
  if (fds.change > 0) v.grew.push_back(count_phrase(fds, "fds", v.rounds, size.size_bytes));
  if (!threads.role.empty() && (v.threads.role.empty() || threads.change > v.threads.change)) v.threads = threads;
  if (!fds.role.empty() && (v.fds.role.empty() || fds.change > v.fds.change)) v.fds = fds;
}

}  // namespace

const char* resource_verdict_name(ResourceVerdict v) {
  switch (v) {
    case ResourceVerdict::kFlat: return "flat";
    case ResourceVerdict::kGrew: return "grew";
    case ResourceVerdict::kTooShort: return "too_short";
  }
  return "too_short";
}

std::optional<ResourceVerdict> resource_verdict_from_name(const std::string& name) {
  for (ResourceVerdict v : {ResourceVerdict::kFlat, ResourceVerdict::kGrew, ResourceVerdict::kTooShort})
    if (name == resource_verdict_name(v)) return v;
  return std::nullopt;
}

SizeVerdict judge_size(const SizeResources& size) {
  SizeVerdict v;
  v.size_bytes = size.size_bytes;
  bool any = false;
  for (const ProcessResources& p : size.processes) {
    v.rounds = any ? std::min(v.rounds, p.rounds) : p.rounds;
    any = true;
  }
  if (!any || v.rounds < kMinRoundsToJudge) return v;  // too short (a process without rounds among them)
  for (const char* role : kRoles) judge_role(role, size, v);
  if (!v.rss)
    v.rss_not_judged = size.traced_rounds == kAllRoundsTraced
                           ? "--trace keeps every traced call's spans until the size ends (--trace-iters K leaves "
                             "the calls after the K-th to judge)"
                           : "fewer than " + std::to_string(kMinRssPoints) +
                                 " calls after the traced ones in the later half of the calls";
  v.verdict = v.grew.empty() ? ResourceVerdict::kFlat : ResourceVerdict::kGrew;
  return v;
}

ResourcesVerdict combine_sizes(std::vector<SizeVerdict> sizes) {
  ResourcesVerdict out;
  out.sizes = std::move(sizes);
  for (const SizeVerdict& s : out.sizes) {
    out.grew.insert(out.grew.end(), s.grew.begin(), s.grew.end());
    if (s.verdict == ResourceVerdict::kGrew) out.verdict = ResourceVerdict::kGrew;
    else if (s.verdict == ResourceVerdict::kFlat && out.verdict == ResourceVerdict::kTooShort) out.verdict = ResourceVerdict::kFlat;
  }
  return out;
}

ResourcesVerdict judge_run(const std::vector<SizeResources>& sizes) {
  std::vector<SizeVerdict> judged;
  for (const SizeResources& s : sizes) judged.push_back(judge_size(s));
  return combine_sizes(std::move(judged));
}

std::string verdict_line(const ResourcesVerdict& v) {
  uint64_t judged_rounds = 0, fewest = UINT64_MAX;
  int judged = 0, short_sizes = 0;
  const SizeVerdict* steepest = nullptr;
  std::string not_judged;
  for (const SizeVerdict& s : v.sizes) {
    fewest = std::min(fewest, s.rounds);
    if (s.verdict == ResourceVerdict::kTooShort) {
      ++short_sizes;
      continue;
    }
    ++judged;
    judged_rounds += s.rounds;
    if (s.rss && (!steepest || s.rss->fit.slope > steepest->rss->fit.slope)) steepest = &s;
    if (!s.rss && not_judged.empty()) not_judged = s.rss_not_judged;
  }
  const std::string too_short = std::to_string(kMinRoundsToJudge) + " needed)";
  if (v.verdict == ResourceVerdict::kTooShort)
    return "too short to judge (" + std::to_string(v.sizes.empty() ? 0 : fewest) + " calls per size; " + too_short;
  std::string tail;
  if (short_sizes > 0)
    tail += "; " + std::to_string(short_sizes) + (short_sizes == 1 ? " size" : " sizes") +
            " too short to judge (fewer than " + too_short;
  if (!not_judged.empty()) tail += "; rss not judged: " + not_judged;
  if (v.verdict == ResourceVerdict::kGrew) {
    std::string what;
    for (const auto& g : v.grew) what += (what.empty() ? "" : "; ") + g;
    return "GREW: " + what + tail;
  }
  std::string detail;
  if (steepest) {
    const RssTrend& t = *steepest->rss;
    // The interval shows a slope of noise for what it is.
    detail = "steepest rss trend " + t.role + " " + signed_bytes(t.fit.slope) + " per call, 99.9% within " +
             signed_bytes(t.fit.low) + " to " + signed_bytes(t.fit.high) + " (" + whose(t.rank, steepest->size_bytes) +
             "); ";
  }
  return "flat over " + std::to_string(judged_rounds) + " calls" +
         (judged > 1 ? " in " + std::to_string(judged) + " sizes" : "") + " (" + detail +
         "threads and descriptors steady)" + tail;
}

}  // namespace omnib
