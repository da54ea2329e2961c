#include "baselines/gloo/gloo_cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace omnib {
namespace {

class TrafficCounter {
 public:
  explicit TrafficCounter(size_t elem_size) : elem_size_(elem_size) {}
  void send(size_t elements) {
    t_.data_bytes += static_cast<double>(elements * elem_size_);
    ++t_.data_messages;
  }
  void notify(size_t times = 1) { t_.notifications += static_cast<int>(times); }
  GlooRankTraffic result() const { return t_; }

 private:
  size_t elem_size_;
  GlooRankTraffic t_;
};

// AllreduceRing: the whole tensor to the right neighbour n-1 times, each
// round followed by a notification to the left.
GlooRankTraffic ring(int nodes, size_t count, size_t elem_size) {
  TrafficCounter t(elem_size);
  for (int round = 0; round < nodes - 1; ++round) {
    t.send(count);
    t.notify();
  }
  return t.result();
}

// AllreduceRingChunked: 2n chunks of at least 256 elements, double
// buffered: two chunks up front, one per reduce round, one per broadcast
// round but the last two, and a closing barrier notification.
GlooRankTraffic ring_chunked(int nodes, int rank, size_t count, size_t elem_size) {
  TrafficCounter t(elem_size);
  const long long chunks = 2LL * nodes;
  const size_t chunk_size = std::max<size_t>(256, (count + chunks - 1) / chunks);
  auto send_chunk = [&](long long chunk) {
    const size_t offset = static_cast<size_t>(chunk % chunks) * chunk_size;
    if (offset + chunk_size <= count)
      t.send(chunk_size);
    else if (offset < count)
      t.send(count - offset);
    else
      t.send(1);  // Gloo sends one element for an empty chunk
  };
  auto chunk_of_round = [&](long long round) {
    return (2LL * rank - (round & ~1LL) + (round & 1LL) + chunks) % chunks;
  };
  send_chunk(2LL * rank);
  send_chunk(2LL * rank + 1);
  for (long long round = 2; round < chunks; ++round) {
    t.notify();
    send_chunk(chunk_of_round(round));
  }
  for (long long round = 0; round < chunks - 2; ++round) {
    if (round < chunks - 4) {
      t.notify();
      send_chunk(chunk_of_round(round));
    }
  }
  t.notify();
  return t.result();
}

// The binary blocks of AllreduceHalvingDoubling (one per set bit of n,
// largest first) around rank `me`: the size of its own block, and of the
// next smaller and larger blocks it hands over to (0: none).
struct BinaryBlocks {
  uint32_t mine = 0, smaller = 0, larger = 0;
};

BinaryBlocks binary_blocks(uint32_t n, uint32_t me) {
  BinaryBlocks b;
  uint32_t offset = n, block = 1, current = 0, previous = 0;
  do {
    if (n & block) {
      previous = current;
      current = block;
      offset -= block;
      if (b.mine != 0) {
        b.larger = current;
        break;
      }
      if (offset <= me) {
        b.mine = current;
        b.smaller = previous;
      }
    }
    block <<= 1;
  } while (offset != 0);
  return b;
}

// AllreduceHalvingDoubling: ranks split into binary blocks (binary_blocks);
// recursive halving then doubling inside a block, and a hand-over between
// neighbouring blocks.
GlooRankTraffic halving_doubling(int nodes, int rank, size_t count, size_t elem_size) {
  TrafficCounter t(elem_size);
  const auto me = static_cast<uint32_t>(rank);
  const auto steps = static_cast<size_t>(std::log2(nodes));
  const size_t chunk_size = (count + (size_t{1} << steps) - 1) >> steps;
  const BinaryBlocks blocks = binary_blocks(static_cast<uint32_t>(nodes), me);
  const uint32_t my_block = blocks.mine, smaller = blocks.smaller, larger = blocks.larger;
  const auto steps_in_block = static_cast<uint32_t>(std::log2(my_block));

  std::vector<size_t> send_offsets(steps_in_block), recv_offsets(steps_in_block);
  std::vector<size_t> send_counts(steps_in_block, 0), recv_counts(steps_in_block, 0);
  uint32_t bitmask = 1;
  size_t step_chunk = chunk_size << (steps - 1);
  size_t send_offset = 0, recv_offset = 0;
  for (uint32_t i = 0; i < steps_in_block; ++i) {
    const uint32_t peer = me ^ bitmask;
    send_offsets[i] = send_offset + ((peer & bitmask) ? step_chunk : 0);
    recv_offsets[i] = recv_offset + ((me & bitmask) ? step_chunk : 0);
    if (send_offsets[i] < count) send_counts[i] = std::min(step_chunk, count - send_offsets[i]);
    if (recv_offsets[i] < count) recv_counts[i] = std::min(step_chunk, count - recv_offsets[i]);
    if (me & bitmask) {
      send_offset += step_chunk;
      recv_offset += step_chunk;
    }
    bitmask <<= 1;
    step_chunk >>= 1;
  }

  for (uint32_t i = 0; i < steps_in_block; ++i) {  // reduce-scatter
    if (send_offsets[i] < count) t.send(send_counts[i]);
    t.notify();
  }
  const size_t to_larger = steps_in_block > 0 ? recv_counts[steps_in_block - 1] : count;
  if (larger != 0 && to_larger != 0) {
    const uint32_t sends = larger / my_block;
    const size_t per_send = step_chunk >> (static_cast<size_t>(std::log2(sends)) - 1);
    for (uint32_t i = 0; i < sends; ++i)
      if (per_send * i < to_larger) t.send(std::min(per_send, to_larger - per_send * i));
  }
  if (smaller != 0 && recv_offsets[steps_in_block - 1] < count) t.send(recv_counts[steps_in_block - 1]);
  for (uint32_t i = steps_in_block; i-- > 0;) {  // allgather
    if (recv_offsets[i] < count) t.send(recv_counts[i]);
    t.notify();
  }
  return t.result();
}

// AllreduceBcube: in step s, groups of `base` ranks at distance base^s share
// the group's elements out (the last member takes the remainder); each
// member sends every peer that peer's share, and mirrors it in the allgather.
// With more than one step, our wrapper adds an all-to-all barrier.
std::vector<GlooRankTraffic> bcube(int nodes, size_t count, size_t elem_size) {
  const int base = gloo_bcube_base(nodes);
  int steps = 0;
  for (long long span = 1; span < nodes; span *= base) ++steps;
  struct Share {
    std::vector<int> peers;
    long long elems = 0;
  };
  std::vector<std::vector<Share>> shares(static_cast<size_t>(nodes), std::vector<Share>(static_cast<size_t>(steps)));
  std::vector<std::vector<long long>> offsets(static_cast<size_t>(nodes), std::vector<long long>(steps, 0));
  const auto total = static_cast<long long>(count);
  long long distance = 1;
  for (int step = 0; step < steps; ++step) {
    for (int first = 0; first < nodes; ++first) {
      if (!shares[first][step].peers.empty()) continue;
      std::vector<int> group;
      for (int i = 0; i < base; ++i)
        if (first + i * distance < nodes) group.push_back(static_cast<int>(first + i * distance));
      const auto size = static_cast<long long>(group.size());
      long long offset = step == 0 ? 0 : offsets[first][step - 1];
      const long long elems = std::max(step == 0 ? total : shares[first][step - 1].elems, size);
      long long each = elems / size;
      const long long remainder = elems % size;
      if (each == 0) each = 1;
      for (long long i = 0; i < size; ++i) {
        Share& s = shares[group[i]][step];
        for (int peer : group)
          if (peer != group[i]) s.peers.push_back(peer);
        s.elems = i + 1 == size ? each + remainder : each;
        offsets[group[i]][step] = offset;
        offset = (offset + s.elems) % total;
      }
    }
    distance *= base;
  }
  std::vector<GlooRankTraffic> out;
  for (int rank = 0; rank < nodes; ++rank) {
    TrafficCounter t(elem_size);
    for (int step = 0; step < steps; ++step) {  // reduce-scatter
      for (int peer : shares[rank][step].peers) t.send(static_cast<size_t>(shares[peer][step].elems));
      t.notify(shares[rank][step].peers.size());
    }
    for (int step = steps; step-- > 0;) {  // allgather
      for (size_t k = 0; k < shares[rank][step].peers.size(); ++k)
        t.send(static_cast<size_t>(shares[rank][step].elems));
      if (step == 0) t.notify(shares[rank][step].peers.size());
    }
    if (gloo_bcube_needs_barrier(nodes)) t.notify(static_cast<size_t>(nodes - 1));
    out.push_back(t.result());
  }
  return out;
}

}  // namespace

std::vector<GlooRankTraffic> gloo_rank_traffic(GlooAlgorithm a, int nodes, size_t count, size_t elem_size) {
  if (nodes < 2 || count == 0) return std::vector<GlooRankTraffic>(static_cast<size_t>(std::max(nodes, 0)));
  if (a == GlooAlgorithm::kBcube) return bcube(nodes, count, elem_size);
  std::vector<GlooRankTraffic> out;
  for (int rank = 0; rank < nodes; ++rank) {
    switch (a) {
      case GlooAlgorithm::kRing: out.push_back(ring(nodes, count, elem_size)); break;
      case GlooAlgorithm::kRingChunked: out.push_back(ring_chunked(nodes, rank, count, elem_size)); break;
      case GlooAlgorithm::kHalvingDoubling: out.push_back(halving_doubling(nodes, rank, count, elem_size)); break;
      case GlooAlgorithm::kBcube: break;
    }
  }
  return out;
}

WireCost gloo_analytic_cost(GlooAlgorithm a, const CostInputs& c) {
  WireCost cost;
  for (const auto& rank : gloo_rank_traffic(a, c.nodes, c.count, c.elem_size)) {
    cost.sent_per_rank_max = std::max(cost.sent_per_rank_max, rank.wire_bytes());
    cost.sent_total += rank.wire_bytes();
  }
  return cost;
}

}  // namespace omnib
