#include "tools/trace/link_counters.h"

#include <algorithm>
#include <map>

namespace omnib {

std::vector<InFlightSample> bytes_in_flight(const std::vector<const CallSpans*>& calls) {
  // (from, to) -> changes: +bytes when a send ends, -bytes when the receive ends.
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> changes;
  for (size_t r = 0; r < calls.size(); ++r) {
    if (!calls[r]) continue;
    const int rank = static_cast<int>(r);
    for (const SpanRecord& s : calls[r]->spans) {
      if (s.args.peer < 0 || s.args.peer == rank) continue;
      if (s.kind == trace::Kind::kSend)
        changes[{rank, s.args.peer}].push_back({s.end_ns, static_cast<int64_t>(s.args.bytes)});
      else if (s.kind == trace::Kind::kRecv)
        changes[{s.args.peer, rank}].push_back({s.end_ns, -static_cast<int64_t>(s.args.bytes)});
    }
  }
  std::vector<InFlightSample> out;
  for (auto& [pair, list] : changes) {
    // Changes at one instant are merged into one sample.
    std::sort(list.begin(), list.end());
    int64_t level = 0;
    for (const auto& [t, delta] : list) {
      level += delta;
      if (!out.empty() && out.back().from == pair.first && out.back().to == pair.second && out.back().t_ns == t)
        out.back().bytes = level;
      else
        out.push_back({pair.first, pair.second, t, level});
    }
  }
  return out;
}

}  // namespace omnib
