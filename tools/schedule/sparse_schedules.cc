#include "tools/schedule/sparse_schedules.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "baselines/common/balanced_split.h"
#include "baselines/common/sparse_cost.h"
#include "baselines/common/sparse_stream.h"
#include "tools/schedule/link_order.h"

namespace omnib {
namespace {

constexpr uint64_t kFrameOverhead = sizeof(wire::FrameHeader) + sizeof(ChunkHeader);
// Frames a sparse sender keeps in flight on one link.
constexpr size_t kSparseLinkWindow = 2;

const InputSupport& support_of(const ScheduleInputs& in, const char* algo) {
  const InputSupport* s = exact_support(in.cost);
  if (s == nullptr) throw std::invalid_argument(std::string(algo) + " schedule: needs every rank's non-zeros");
  return *s;
}

// A slice's stream in the form SparCML's rule picks (smaller_stream_bytes).
std::vector<uint64_t> smaller_stream_frames(uint64_t pairs, uint64_t length, size_t elem_size) {
  if (pairs * (kIndexBytes + elem_size) >= length * elem_size)
    return stream_frame_bytes(length, elem_size, chunk_capacity(true, elem_size));
  return stream_frame_bytes(pairs, kIndexBytes + elem_size, chunk_capacity(false, elem_size));
}

uint64_t sum_of(const std::vector<uint64_t>& v) {
  uint64_t total = 0;
  for (uint64_t x : v) total += x;
  return total;
}

}  // namespace

std::vector<uint64_t> stream_frame_bytes(uint64_t items, uint64_t item_bytes, uint64_t per_frame) {
  std::vector<uint64_t> frames;
  uint64_t left = items;
  do {
    const uint64_t here = std::min(left, per_frame);
    frames.push_back(here * item_bytes + kFrameOverhead);
    left -= here;
  } while (left > 0);
  return frames;
}

MessageSchedule allgather_schedule(const ScheduleInputs& in) {
  const CostInputs& c = in.cost;
  const int n = c.nodes;
  MessageSchedule s(n);
  if (n <= 1 || c.count == 0) return s;
  const InputSupport& support = support_of(in, "allgather");
  std::vector<std::vector<uint64_t>> frames(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    frames[static_cast<size_t>(r)] =
        stream_frame_bytes(support.elements(r, 0, c.count), kIndexBytes + c.elem_size, chunk_capacity(false, c.elem_size));
  const double scan = in.rates.scan_s_per_byte * static_cast<double>(c.count * c.elem_size);
  std::vector<std::vector<uint32_t>> prev(static_cast<size_t>(n)), cur(static_cast<size_t>(n));
  std::vector<LinkWindow> links(static_cast<size_t>(n), LinkWindow(kSparseLinkWindow));
  std::vector<MessageDep> deps;
  for (int k = 0; k < n - 1; ++k) {
    for (int r = 0; r < n; ++r) {
      const int origin = ((r - k) % n + n) % n;
      const int left = (r + n - 1) % n;
      auto& mine = cur[static_cast<size_t>(r)];
      mine.clear();
      const auto& stream = frames[static_cast<size_t>(origin)];
      for (size_t f = 0; f < stream.size(); ++f) {
        deps.clear();
        double compute = 0;
        if (k == 0) {
          if (f == 0) compute = scan;  // its own pairs are extracted first
        } else {
          deps.push_back({prev[static_cast<size_t>(left)][f], false});
          compute = in.rates.reduce_s_per_byte * static_cast<double>(stream[f]);  // added in as it passes
        }
        links[static_cast<size_t>(r)].deps_for_next(deps);
        const uint32_t id = s.add(r, (r + 1) % n, stream[f], deps, compute);
        links[static_cast<size_t>(r)].sent(id);
        mine.push_back(id);
      }
    }
    std::swap(prev, cur);
  }
  return s;
}

namespace {

// A reduce to region owners, then an allgather of the reduced regions
// (sparse_cost.h: add_owner_exchange_bytes): rank r sends owner j its part
// of region j once `start[r]` (if any) is done; owner j, once it has every
// part, sends its reduced region to every other rank.
void add_owner_exchange(const ScheduleInputs& in, const InputSupport& support, const std::vector<Slice>& regions,
                        const std::vector<std::optional<uint32_t>>& start, MessageSchedule& s) {
  const CostInputs& c = in.cost;
  const int n = c.nodes;
  const bool pace = in.flows.paces(n, n - 1);
  if (pace)
    s.add_note("each rank's n-1 streams of a round sent one after another (paced at line rate, rotated), not at once");
  const double scan = in.rates.scan_s_per_byte * static_cast<double>(c.count * c.elem_size);
  // Round 1: parts to the owners. parts_in[j]: what owner j waits for.
  std::vector<std::vector<MessageDep>> parts_in(static_cast<size_t>(n));
  std::vector<double> part_bytes_in(static_cast<size_t>(n), 0);
  std::vector<MessageDep> deps;
  for (int r = 0; r < n; ++r) {
    PacedFanOut fan_out(pace, in.flows.paced_lanes);
    for (int k = 0; k < n - 1; ++k) {
      const int j = rotated_peer(r, n, k);
      const Slice& region = regions[static_cast<size_t>(j)];
      const uint64_t bytes =
          sum_of(smaller_stream_frames(support.elements(r, region.begin, region.end()), region.length, c.elem_size));
      deps.clear();
      if (start[static_cast<size_t>(r)]) deps.push_back({*start[static_cast<size_t>(r)], false});
      fan_out.deps_for_next(deps);
      const uint32_t id = s.add(r, j, bytes, deps, k == 0 ? scan : 0);
      fan_out.sent(id);
      parts_in[static_cast<size_t>(j)].push_back({id, false});
      part_bytes_in[static_cast<size_t>(j)] += static_cast<double>(bytes);
    }
  }
  // Round 2: each owner's reduced region to every other rank.
  for (int j = 0; j < n; ++j) {
    const uint32_t reduced =
        s.join(j, parts_in[static_cast<size_t>(j)], in.rates.reduce_s_per_byte * part_bytes_in[static_cast<size_t>(j)]);
    const Slice& region = regions[static_cast<size_t>(j)];
    const uint64_t bytes =
        sum_of(smaller_stream_frames(support.sum_elements(region.begin, region.end()), region.length, c.elem_size));
    PacedFanOut fan_out(pace, in.flows.paced_lanes);
    for (int k = 0; k < n - 1; ++k) {
      const int r = rotated_peer(j, n, k);
      deps.assign({{reduced, false}});
      fan_out.deps_for_next(deps);
      fan_out.sent(s.add(j, r, bytes, deps));
    }
  }
}

}  // namespace

MessageSchedule sparcml_split_schedule(const ScheduleInputs& in) {
  const int n = in.cost.nodes;
  MessageSchedule s(n);
  if (n <= 1 || in.cost.count == 0) return s;
  std::vector<Slice> slices;
  for (int j = 0; j < n; ++j) slices.push_back(even_slice(in.cost.count, n, j));
  add_owner_exchange(in, support_of(in, "sparcml-split"), slices, std::vector<std::optional<uint32_t>>(n), s);
  return s;
}

MessageSchedule oktopk_schedule(const ScheduleInputs& in) {
  const int n = in.cost.nodes;
  MessageSchedule s(n);
  if (n <= 1 || in.cost.count == 0) return s;
  const InputSupport& support = support_of(in, "oktopk");
  std::vector<size_t> rounds;
  const std::vector<Slice> regions = balanced_regions(support, rounds);
  // The histogram rounds: every rank's counts to every peer; a rank starts
  // the next round (and then its parts) once it has every peer's counts.
  const bool pace = in.flows.paces(n, n - 1);
  std::vector<std::optional<uint32_t>> done(static_cast<size_t>(n));
  std::vector<std::vector<MessageDep>> counts_in(static_cast<size_t>(n));
  std::vector<MessageDep> deps;
  for (size_t cells : rounds) {
    const uint64_t bytes = sum_of(
        stream_frame_bytes(cells, kHistogramCountBytes, chunk_capacity(true, kHistogramCountBytes)));
    for (auto& waiting : counts_in) waiting.clear();
    for (int r = 0; r < n; ++r) {
      PacedFanOut fan_out(pace, in.flows.paced_lanes);
      for (int k = 0; k < n - 1; ++k) {
        const int j = rotated_peer(r, n, k);
        deps.clear();
        if (done[static_cast<size_t>(r)]) deps.push_back({*done[static_cast<size_t>(r)], false});
        fan_out.deps_for_next(deps);
        const uint32_t id = s.add(r, j, bytes, deps);
        fan_out.sent(id);
        counts_in[static_cast<size_t>(j)].push_back({id, false});
      }
    }
    for (int r = 0; r < n; ++r) {
      if (done[static_cast<size_t>(r)]) counts_in[static_cast<size_t>(r)].push_back({*done[static_cast<size_t>(r)], false});
      done[static_cast<size_t>(r)] = s.join(r, counts_in[static_cast<size_t>(r)]);
    }
  }
  add_owner_exchange(in, support, regions, done, s);
  return s;
}

}  // namespace omnib
