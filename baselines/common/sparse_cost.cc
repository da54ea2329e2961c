#include "baselines/common/sparse_cost.h"

#include <algorithm>
#include <cmath>

#include "baselines/common/sparse_stream.h"
#include "engine/transport/frame_format.h"

namespace omnib {

double stream_wire_bytes(double items, double item_bytes, double per_frame) {
  const double frames = std::max(1.0, std::ceil(items / per_frame));
  return items * item_bytes + frames * static_cast<double>(sizeof(wire::FrameHeader) + sizeof(ChunkHeader));
}

double sparse_stream_bytes(double pairs, size_t elem_size) {
  return stream_wire_bytes(pairs, static_cast<double>(kIndexBytes + elem_size),
                           static_cast<double>(chunk_capacity(false, elem_size)));
}

double smaller_stream_bytes(double pairs, double length, size_t elem_size) {
  const double e = static_cast<double>(elem_size);
  if (pairs * (static_cast<double>(kIndexBytes) + e) >= length * e)
    return stream_wire_bytes(length, e, static_cast<double>(chunk_capacity(true, elem_size)));
  return sparse_stream_bytes(pairs, elem_size);
}

const InputSupport* exact_support(const CostInputs& c) {
  const InputSupport* s = c.support;
  return s != nullptr && s->nodes() == c.nodes && s->count() == c.count ? s : nullptr;
}

WireCost wire_cost_of(std::span<const double> sent, bool exact) {
  WireCost cost;
  cost.exact = exact;
  for (double s : sent) {
    cost.sent_per_rank_max = std::max(cost.sent_per_rank_max, s);
    cost.sent_total += s;
  }
  return cost;
}

WireCost all_peers_cost(int n, double per_peer) {
  const double per_rank = (n - 1) * per_peer;
  return {per_rank, n * per_rank};
}

OwnerExchangeEstimate owner_exchange_estimate(const CostInputs& c) {
  const double m = static_cast<double>(c.count) / c.nodes;  // elements in one owner's region
  return {smaller_stream_bytes(c.stats.element_density * m, m, c.elem_size),
          smaller_stream_bytes(c.stats.union_element_density * m, m, c.elem_size)};
}

void add_owner_exchange_bytes(const InputSupport& support, std::span<const Slice> regions, size_t elem_size,
                              std::vector<double>& sent) {
  const int n = support.nodes();
  for (int j = 0; j < n; ++j) {
    const Slice& region = regions[static_cast<size_t>(j)];
    const auto length = static_cast<double>(region.length);
    for (int r = 0; r < n; ++r)
      if (r != j)
        sent[static_cast<size_t>(r)] += smaller_stream_bytes(
            static_cast<double>(support.elements(r, region.begin, region.end())), length, elem_size);
    const auto reduced = static_cast<double>(support.sum_elements(region.begin, region.end()));
    sent[static_cast<size_t>(j)] += (n - 1) * smaller_stream_bytes(reduced, length, elem_size);
  }
}

}  // namespace omnib
