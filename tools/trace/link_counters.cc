#include "tools/trace/link_counters.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace omnib {
namespace {

// One direction of one link: (from, to, shard, what follows "send "/"recv ").
using Channel = std::tuple<int, int, int, std::string>;

std::string stream(const SpanRecord& s) { return s.name.size() > 5 ? s.name.substr(5) : s.name; }

bool by_begin(const SpanRecord* a, const SpanRecord* b) { return a->begin_ns < b->begin_ns; }

}  // namespace

std::vector<InFlightSample> bytes_in_flight(const std::vector<const CallSpans*>& calls) {
  std::map<Channel, std::pair<std::vector<const SpanRecord*>, std::vector<const SpanRecord*>>> channels;
  for (size_t r = 0; r < calls.size(); ++r) {
    if (!calls[r]) continue;
    const int rank = static_cast<int>(r);
    for (const SpanRecord& s : calls[r]->spans) {
      if (s.args.peer < 0 || s.args.peer == rank) continue;
      if (s.kind == trace::Kind::kSend) channels[{rank, s.args.peer, s.args.shard, stream(s)}].first.push_back(&s);
      if (s.kind == trace::Kind::kRecv) channels[{s.args.peer, rank, s.args.shard, stream(s)}].second.push_back(&s);
    }
  }
  // (from, to) -> changes (time, delta).
  std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> changes;
  for (auto& [channel, spans] : channels) {
    auto& [sends, recvs] = spans;
    std::sort(sends.begin(), sends.end(), by_begin);
    std::sort(recvs.begin(), recvs.end(), by_begin);
    auto& list = changes[{std::get<0>(channel), std::get<1>(channel)}];
    for (size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
      const SpanRecord* send = k < sends.size() ? sends[k] : nullptr;
      const SpanRecord* recv = k < recvs.size() ? recvs[k] : nullptr;
      if (send) list.push_back({send->end_ns, static_cast<int64_t>(send->args.bytes)});
      if (recv)
        list.push_back({send ? std::max(send->end_ns, recv->end_ns) : recv->end_ns,
                        -static_cast<int64_t>(recv->args.bytes)});
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
