#include "tools/measure/call_breakdown.h"

#include <algorithm>
#include <array>

namespace omnib {
namespace {

// Categories in priority order; -1 for spans that are not counted.
constexpr int kCompute = 0, kSend = 1, kWait = 2, kBackend = 3, kCategories = 4;

int category(trace::Kind kind) {
  switch (kind) {
    case trace::Kind::kCompute: return kCompute;
    case trace::Kind::kSend: return kSend;
    case trace::Kind::kRecv:
    case trace::Kind::kWait: return kWait;
    case trace::Kind::kBackend: return kBackend;
    default: return -1;
  }
}

struct Edge {
  int64_t t;
  int category;
  int delta;  // +1 opens, -1 closes
};

}  // namespace

Result<CallBreakdown> break_down_call(const std::vector<SpanRecord>& spans) {
  const SpanRecord* call = nullptr;
  const SpanRecord* barrier = nullptr;
  for (const auto& s : spans) {
    const SpanRecord** slot = s.kind == trace::Kind::kCall ? &call : s.kind == trace::Kind::kBarrier ? &barrier : nullptr;
    if (!slot) continue;
    if (*slot) return usage_error(std::string("a call has more than one ") + kind_name(s.kind) + " span");
    *slot = &s;
  }
  if (!call) return usage_error("a call has no call span");
  CallBreakdown out;
  out.call_us = call->duration_us();
  if (barrier) out.barrier_us = barrier->duration_us();

  std::vector<Edge> edges;
  for (const auto& s : spans) {
    const int c = category(s.kind);
    const int64_t begin = std::max(s.begin_ns, call->begin_ns);
    const int64_t end = std::min(s.end_ns, call->end_ns);
    if (c < 0 || end <= begin) continue;
    edges.push_back({begin, c, +1});
    edges.push_back({end, c, -1});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::array<double*, kCategories> parts = {&out.compute_us, &out.send_us, &out.wait_us, &out.backend_us};
  std::array<int, kCategories> open{};
  int64_t prev = call->begin_ns;
  auto account = [&](int64_t until) {
    double* part = &out.other_us;
    for (int c = 0; c < kCategories; ++c)
      if (open[static_cast<size_t>(c)] > 0) {
        part = parts[static_cast<size_t>(c)];
        break;
      }
    *part += static_cast<double>(until - prev) / 1e3;
    prev = until;
  };
  for (const Edge& e : edges) {
    account(e.t);
    open[static_cast<size_t>(e.category)] += e.delta;
  }
  account(call->end_ns);
  return out;
}

}  // namespace omnib
