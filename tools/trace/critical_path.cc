#include "tools/trace/critical_path.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace omnib {
namespace {

bool is_leaf(trace::Kind k) {
  return k == trace::Kind::kCompute || k == trace::Kind::kSend || k == trace::Kind::kRecv ||
         k == trace::Kind::kWait || k == trace::Kind::kBackend;
}

const SpanRecord* call_span(const CallSpans* c) {
  if (!c) return nullptr;
  for (const auto& s : c->spans)
    if (s.kind == trace::Kind::kCall) return &s;
  return nullptr;
}

// The leaf spans of every rank, and the k-th send/receive per directed pair.
class CallIndex {
 public:
  explicit CallIndex(const TracedCall& call) : leaves_(call.ranks.size()) {
    for (size_t r = 0; r < call.ranks.size(); ++r) {
      if (!call.ranks[r]) continue;
      for (const SpanRecord& s : call.ranks[r]->spans)
        if (is_leaf(s.kind)) leaves_[r].push_back(&s);
      std::sort(leaves_[r].begin(), leaves_[r].end(),
                [](const SpanRecord* a, const SpanRecord* b) { return a->begin_ns < b->begin_ns; });
      for (const SpanRecord* s : leaves_[r]) {
        if (s->args.peer < 0) continue;
        const int rank = static_cast<int>(r);
        if (s->kind == trace::Kind::kSend) sends_[{rank, s->args.peer, s->args.shard, stream(*s)}].push_back(s);
        if (s->kind == trace::Kind::kRecv) recvs_[{s->args.peer, rank, s->args.shard, stream(*s)}].push_back(s);
      }
    }
  }

  const std::vector<const SpanRecord*>& leaves(int rank) const { return leaves_[static_cast<size_t>(rank)]; }

  // The send that put on the wire the frame `recv` (on rank `to`) took.
  const SpanRecord* matching_send(int to, const SpanRecord* recv) const {
    const Channel key{recv->args.peer, to, recv->args.shard, stream(*recv)};
    auto r = recvs_.find(key);
    auto s = sends_.find(key);
    if (r == recvs_.end() || s == sends_.end()) return nullptr;
    const size_t k = static_cast<size_t>(std::find(r->second.begin(), r->second.end(), recv) - r->second.begin());
    return k < s->second.size() ? s->second[k] : nullptr;
  }

 private:
  // "send batch" pairs with "recv batch": what follows the verb names the stream.
  static std::string stream(const SpanRecord& s) { return s.name.size() > 5 ? s.name.substr(5) : s.name; }

  using Channel = std::tuple<int, int, int, std::string>;  // (from, to, shard, stream): one direction of one link
  std::vector<std::vector<const SpanRecord*>> leaves_;  // by begin
  std::map<Channel, std::vector<const SpanRecord*>> sends_, recvs_;
};

PathStep predecessor(const CallIndex& index, PathStep at, int64_t tolerance_ns) {
  const SpanRecord& s = *at.span;
  const auto& leaves = index.leaves(at.rank);
  if (s.kind == trace::Kind::kRecv && s.args.peer >= 0) {
    const SpanRecord* send = index.matching_send(at.rank, &s);
    // The receive waited for the send: it was still going on when the
    // receive began, or ended while the lane stood in the wait just before
    // (a receive taken from a queue is a point, after its lane's wait).
    if (send && send->end_ns + tolerance_ns > s.begin_ns) return {s.args.peer, send};
    const SpanRecord* lane_before = nullptr;
    for (const SpanRecord* o : leaves)
      if (o != &s && o->thread == s.thread && o->end_ns <= s.begin_ns && (!lane_before || o->end_ns > lane_before->end_ns))
        lane_before = o;
    if (send && lane_before && lane_before->kind == trace::Kind::kWait && send->end_ns + tolerance_ns > lane_before->begin_ns)
      return {s.args.peer, send};
  }
  if (s.kind == trace::Kind::kWait) {
    const SpanRecord* best = nullptr;
    for (const SpanRecord* o : leaves) {
      if (o->thread == s.thread || o->kind == trace::Kind::kWait || o->end_ns <= s.begin_ns || o->end_ns > s.end_ns)
        continue;
      const bool same_peer = s.args.peer >= 0 && o->args.peer == s.args.peer;
      const bool best_same_peer = best && s.args.peer >= 0 && best->args.peer == s.args.peer;
      if (!best || (same_peer && !best_same_peer) || (same_peer == best_same_peer && o->end_ns > best->end_ns))
        best = o;
    }
    if (best) return {at.rank, best};
  }
  // The span before on the same lane; for a lane's first span, what this
  // rank did last before the lane began (the call's own work before its lanes start).
  const SpanRecord* before = nullptr;
  const SpanRecord* before_any = nullptr;
  for (const SpanRecord* o : leaves) {
    if (o == &s || o->end_ns > s.begin_ns) continue;
    if (o->thread == s.thread && (!before || o->end_ns > before->end_ns)) before = o;
    if (!before_any || o->end_ns > before_any->end_ns) before_any = o;
  }
  return {at.rank, before ? before : before_any};
}

}  // namespace

CriticalPath critical_path(const TracedCall& call, const std::vector<bool>& worker, int64_t tolerance_ns) {
  CriticalPath path;
  bool first = true;
  int64_t earliest = 0;
  for (size_t r = 0; r < call.ranks.size(); ++r) {
    const SpanRecord* c = call_span(call.ranks[r]);
    if (!c) continue;
    if (first || c->begin_ns < earliest) earliest = c->begin_ns;
    if (r < worker.size() && worker[r] && (first || c->end_ns > path.call_end_ns)) {
      path.call_end_ns = c->end_ns;
      path.end_rank = static_cast<int>(r);
    }
    first = false;
  }
  if (first) return path;
  path.start_rank = path.end_rank;
  path.call_begin_ns = call_span(call.ranks[static_cast<size_t>(path.end_rank)])->begin_ns;
  const CallIndex index(call);
  PathStep at{path.end_rank, nullptr};
  for (const SpanRecord* s : index.leaves(path.end_rank))
    if (s->end_ns <= path.call_end_ns && (!at.span || s->end_ns > at.span->end_ns)) at.span = s;
  std::set<const SpanRecord*> seen;
  while (at.span && seen.insert(at.span).second) {
    path.steps.push_back(at);
    at = predecessor(index, at, tolerance_ns);
  }
  std::reverse(path.steps.begin(), path.steps.end());
  if (path.steps.empty()) return path;
  path.start_rank = path.steps.front().rank;
  path.call_begin_ns = call_span(call.ranks[static_cast<size_t>(path.start_rank)])->begin_ns;
  path.entry_skew_us = static_cast<double>(path.call_begin_ns - earliest) / 1e3;
  int64_t reached = path.call_begin_ns;
  for (size_t i = 0; i < path.steps.size(); ++i) {
    PathStep& st = path.steps[i];
    // A receive that follows its send on the path owns the time its frame
    // was in flight (in the transport, which records no spans).
    const bool after_its_send = i > 0 && st.span->kind == trace::Kind::kRecv &&
                                path.steps[i - 1].span->kind == trace::Kind::kSend &&
                                path.steps[i - 1].rank == st.span->args.peer;
    const int64_t from = after_its_send ? reached : std::max(reached, st.span->begin_ns);
    const int64_t to = std::min(path.call_end_ns, st.span->end_ns);
    st.critical_us = to > from ? static_cast<double>(to - from) / 1e3 : 0;
    path.critical_us += st.critical_us;
    reached = std::max(reached, to);
  }
  return path;
}

}  // namespace omnib
