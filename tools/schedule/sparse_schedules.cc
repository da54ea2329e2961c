#include "tools/schedule/sparse_schedules.h"

#include <algorithm>
#include <stdexcept>

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

MessageSchedule sparcml_split_schedule(const ScheduleInputs& in) {
  const CostInputs& c = in.cost;
  const int n = c.nodes;
  MessageSchedule s(n);
  if (n <= 1 || c.count == 0) return s;
  const InputSupport& support = support_of(in, "sparcml-split");
  const bool pace = in.flows.paces(n, n - 1);
  if (pace)
    s.add_note("each rank's n-1 streams of a round sent one after another (paced at line rate, rotated), not at once");
  const double scan = in.rates.scan_s_per_byte * static_cast<double>(c.count * c.elem_size);
  // Round 1: parts to the owners. parts_in[j]: what owner j waits for.
  std::vector<std::vector<MessageDep>> parts_in(static_cast<size_t>(n));
  std::vector<double> part_bytes_in(static_cast<size_t>(n), 0);
  std::vector<MessageDep> deps;
  for (int r = 0; r < n; ++r) {
    PacedFanOut fan_out(pace, in.flows.paced_window);
    for (int k = 0; k < n - 1; ++k) {
      const int j = rotated_peer(r, n, k);
      const Slice region = even_slice(c.count, n, j);
      const uint64_t bytes =
          sum_of(smaller_stream_frames(support.elements(r, region.begin, region.end()), region.length, c.elem_size));
      deps.clear();
      fan_out.deps_for_next(deps);
      const uint32_t id = s.add(r, j, bytes, deps, k == 0 ? scan : 0);
      fan_out.sent(id);
      parts_in[static_cast<size_t>(j)].push_back({id, false});
      part_bytes_in[static_cast<size_t>(j)] += static_cast<double>(bytes);
    }
  }
  // Round 2: each owner's reduced slice to every other rank.
  for (int j = 0; j < n; ++j) {
    const uint32_t reduced =
        s.join(j, parts_in[static_cast<size_t>(j)], in.rates.reduce_s_per_byte * part_bytes_in[static_cast<size_t>(j)]);
    const Slice region = even_slice(c.count, n, j);
    const uint64_t bytes =
        sum_of(smaller_stream_frames(support.sum_elements(region.begin, region.end()), region.length, c.elem_size));
    PacedFanOut fan_out(pace, in.flows.paced_window);
    for (int k = 0; k < n - 1; ++k) {
      const int r = rotated_peer(j, n, k);
      deps.assign({{reduced, false}});
      fan_out.deps_for_next(deps);
      fan_out.sent(s.add(j, r, bytes, deps));
    }
  }
  return s;
}

}  // namespace omnib
