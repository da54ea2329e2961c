// Drives a WorkerBlockIo the way the omni engine does, for tests that hold
// the host and the device implementations to the same contract.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "engine/blocks/block_compaction.h"
#include "engine/blocks/block_scan.h"
#include "engine/omni/batch_encoding.h"
#include "engine/omni/block_batch.h"
#include "engine/omni/worker_block_io.h"
#include "engine/blocks/shard_map.h"
#include "tests/support/block_compaction_inputs.h"

namespace omnib::test_block_io {

struct StagedShard {
  std::vector<uint64_t> indices;
  std::vector<uint32_t> nonzeros;  // per block, as find() counted them
  std::vector<uint8_t> values;     // what value_iovecs covers, flattened
};

// Finds the blocks over pieces of `piece` blocks, deals them to their shards,
// and flattens each shard's values in batches of `per_batch`, as the engine's
// send lane does.
inline std::vector<StagedShard> stage_all(WorkerBlockIo& io, const BlockLayout& layout, const ShardMap& map,
                                          bool dense, uint64_t piece, size_t per_batch, Status* status) {
  std::vector<StagedShard> out(static_cast<size_t>(map.shards()));
  std::vector<uint64_t> found;
  std::vector<uint32_t> nonzeros;
  for (uint64_t from = 0; from < layout.num_blocks(); from += piece) {
    found.clear();
    nonzeros.clear();
    *status = io.find(from, std::min(layout.num_blocks(), from + piece), dense, found, &nonzeros);
    if (!status->is_ok()) return out;
    if (nonzeros.size() != found.size()) {
      *status = internal_error("find() counted " + std::to_string(nonzeros.size()) + " blocks of " +
                               std::to_string(found.size()));
      return out;
    }
    for (size_t k = 0; k < found.size(); ++k) {
      StagedShard& shard = out[static_cast<size_t>(map.owner(found[k]))];
      shard.indices.push_back(found[k]);
      shard.nonzeros.push_back(nonzeros[k]);
    }
  }
  for (StagedShard& shard : out) {
    for (size_t pos = 0; pos < shard.indices.size(); pos += per_batch) {
      std::vector<iovec> iov;
      const size_t n = std::min(per_batch, shard.indices.size() - pos);
      io.value_iovecs(std::span<const uint64_t>(shard.indices.data() + pos, n), iov);
      for (const iovec& v : iov) {
        const auto* p = static_cast<const uint8_t*>(v.iov_base);
        shard.values.insert(shard.values.end(), p, p + v.iov_len);
      }
    }
  }
  *status = Status::ok();
  return out;
}

// What stage_all must find: each shard's non-zero blocks (or all), and their bytes.
inline std::vector<StagedShard> expected_staging(const std::vector<uint32_t>& tensor, const BlockLayout& layout,
                                                 const ShardMap& map, bool dense) {
  std::vector<StagedShard> out(static_cast<size_t>(map.shards()));
  std::vector<uint64_t> blocks;
  if (dense) {
    for (uint64_t b = 0; b < layout.num_blocks(); ++b) blocks.push_back(b);
  } else {
    blocks = nonzero_blocks(tensor.data(), 4, layout);
  }
  for (uint64_t b : blocks) {
    StagedShard& shard = out[static_cast<size_t>(map.owner(b))];
    shard.indices.push_back(b);
    shard.nonzeros.push_back(
        static_cast<uint32_t>(count_nonzero(tensor.data() + layout.block_begin(b), layout.block_length(b), 4)));
    const auto* p = reinterpret_cast<const uint8_t*>(tensor.data() + layout.block_begin(b));
    shard.values.insert(shard.values.end(), p, p + layout.block_length(b) * 4);
  }
  return out;
}

// Stages sparse and dense, over pieces and batches of several sizes, and
// expects what the host reference finds in `tensor` (a host copy).
inline void expect_stages_like_reference(WorkerBlockIo& io, const std::vector<uint32_t>& tensor,
                                         const BlockLayout& layout, const ShardMap& map,
                                         const std::vector<size_t>& batch_sizes) {
  for (bool dense : {false, true}) {
    const auto want = expected_staging(tensor, layout, map, dense);
    for (size_t per_batch : batch_sizes) {
      for (uint64_t piece : {uint64_t{1}, uint64_t{37}, layout.num_blocks() + 1}) {
        Status st;
        auto got = stage_all(io, layout, map, dense, piece, per_batch, &st);
        ASSERT_TRUE(st.is_ok()) << st.message();
        for (size_t s = 0; s < got.size(); ++s) {
          EXPECT_EQ(got[s].indices, want[s].indices) << "shard " << s << " dense " << dense << " piece " << piece;
          EXPECT_EQ(got[s].nonzeros, want[s].nonzeros) << "shard " << s << " dense " << dense << " piece " << piece;
          EXPECT_EQ(got[s].values, want[s].values) << "shard " << s << " dense " << dense << " batch " << per_batch;
        }
      }
    }
  }
}

// One found block's taken elements, as find_taking left them.
struct TakenBlockElements {
  bool taken = false;
  std::vector<uint32_t> positions;
  std::vector<uint8_t> values;
  bool operator==(const TakenBlockElements&) const = default;
};

// The found blocks [begin, end) of `taken` (whose counts are counts[begin..end)), one entry each.
inline std::vector<TakenBlockElements> taken_per_block(const FoundElements& taken, const uint32_t* counts, size_t n,
                                                       size_t elem_size) {
  std::vector<TakenBlockElements> out(n);
  for (size_t k = 0; k < n; ++k) {
    if (taken.first[k] == FoundElements::kNotTaken) continue;
    const uint64_t at = taken.first[k];
    out[k].taken = true;
    out[k].positions.assign(taken.positions.begin() + static_cast<std::ptrdiff_t>(at),
                            taken.positions.begin() + static_cast<std::ptrdiff_t>(at + counts[k]));
    out[k].values.assign(taken.values.data() + at * elem_size, taken.values.data() + (at + counts[k]) * elem_size);
  }
  return out;
}

// find_taking over pieces, as the engine's send lane calls it, gives the
// blocks, counts and taken elements of the host scan (the reference), and
// value_iovecs still addresses the found blocks' whole values afterwards (a
// batch with a block too dense to take packs that block from them).
inline void expect_takes_like_reference(WorkerBlockIo& io, const std::vector<uint32_t>& tensor,
                                        const BlockLayout& layout) {
  const uint64_t n = layout.num_blocks();
  std::vector<uint64_t> want_found;
  std::vector<uint32_t> want_counts;
  FoundElements want_taken;
  find_count_and_take_nonzero_blocks(tensor.data(), 4, layout, {0, n}, want_found, want_counts, want_taken);
  const auto want = taken_per_block(want_taken, want_counts.data(), want_found.size(), 4);
  for (uint64_t piece : {uint64_t{1}, uint64_t{37}, n + 1}) {
    std::vector<uint64_t> found;
    std::vector<uint32_t> counts;
    std::vector<TakenBlockElements> got;
    for (uint64_t from = 0; from < n; from += piece) {
      FoundElements taken;
      const size_t before = found.size();
      const Status st = io.find_taking(from, std::min(n, from + piece), found, counts, taken);
      ASSERT_TRUE(st.is_ok()) << st.message();
      ASSERT_EQ(counts.size(), found.size()) << "piece " << piece;
      ASSERT_EQ(taken.first.size(), found.size() - before) << "piece " << piece;
      auto mine = taken_per_block(taken, counts.data() + before, found.size() - before, 4);
      got.insert(got.end(), mine.begin(), mine.end());
    }
    ASSERT_EQ(found, want_found) << "piece " << piece;
    EXPECT_EQ(counts, want_counts) << "piece " << piece;
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k)
      ASSERT_EQ(got[k], want[k]) << "block " << found[k] << " (" << counts[k] << " non-zeros), piece " << piece;
    std::vector<iovec> iov;
    io.value_iovecs(found, iov);
    std::vector<uint8_t> values;
    for (const iovec& v : iov)
      values.insert(values.end(), static_cast<const uint8_t*>(v.iov_base),
                    static_cast<const uint8_t*>(v.iov_base) + v.iov_len);
    std::vector<uint8_t> want_values;
    for (uint64_t b : found) {
      const auto* p = reinterpret_cast<const uint8_t*>(tensor.data() + layout.block_begin(b));
      want_values.insert(want_values.end(), p, p + layout.block_length(b) * 4);
    }
    EXPECT_EQ(values, want_values) << "whole values after taking, piece " << piece;
  }
}

// The blocks of `listed` that shard `s` owns.
inline std::vector<uint64_t> blocks_of_shard(const std::vector<uint64_t>& listed, const ShardMap& map, int s) {
  std::vector<uint64_t> mine;
  for (uint64_t b : listed)
    if (map.owner(b) == s) mine.push_back(b);
  return mine;
}

// Delivers blocks `indices` of shard `s` (values taken from `result`) to the
// receive half in batches of `per_batch`, encoded as `policy` picks and
// decoded as frames would be, and ends the shard's stream. begin_receive()
// comes first, once for all shards.
inline Status deliver(WorkerBlockIo& io, int s, const BlockLayout& layout, const ShardMap& map,
                      const std::vector<uint64_t>& indices, const std::vector<uint32_t>& result, size_t per_batch,
                      EncodingPolicy policy = EncodingPolicy::kBlocks) {
  for (size_t pos = 0; pos < indices.size(); pos += per_batch) {
    const size_t n = std::min(per_batch, indices.size() - pos);
    std::vector<uint64_t> batch(indices.begin() + static_cast<long>(pos), indices.begin() + static_cast<long>(pos + n));
    std::vector<iovec> values;
    BatchShape shape;
    for (uint64_t b : batch) {
      values.push_back({const_cast<uint32_t*>(result.data() + layout.block_begin(b)), layout.block_length(b) * 4});
      shape.add_block(layout.block_begin(b), layout.block_length(b),
                      count_nonzero(result.data() + layout.block_begin(b), layout.block_length(b), 4));
    }
    const BlockEncoding encoding = choose_encoding(policy, shape, 4);
    const uint64_t next = pos + n < indices.size() ? indices[pos + n] : kEndOfStream;
    const BatchHeader header{static_cast<uint32_t>(n), static_cast<uint32_t>(encoding), next};
    UninitBytes packed;
    std::vector<iovec> iov;
    batch_prefix_iovecs(header, batch, iov);
    if (encoding == BlockEncoding::kBlocks) {
      iov.insert(iov.end(), values.begin(), values.end());
    } else {
      OMNIB_RETURN_IF_ERROR(pack_sparse(encoding, batch, layout, 4, shape.nonzeros, values, packed));
      iov.push_back({packed.data(), packed.size()});
    }
    std::vector<uint8_t> payload;
    for (const iovec& v : iov)
      payload.insert(payload.end(), static_cast<const uint8_t*>(v.iov_base),
                     static_cast<const uint8_t*>(v.iov_base) + v.iov_len);
    BatchView view;
    OMNIB_RETURN_IF_ERROR(decode_batch(payload, layout, 4, map, s, view));
    OMNIB_RETURN_IF_ERROR(io.store(s, view));
  }
  return io.finish_receive(s);
}

// The output the receive half must leave: `result` on the listed blocks;
// elsewhere zero out of place, or `input` untouched in place.
inline std::vector<uint32_t> expected_output(const std::vector<uint32_t>& result, const std::vector<uint32_t>& input,
                                             const BlockLayout& layout, const std::vector<uint64_t>& listed,
                                             bool in_place) {
  std::vector<uint32_t> out = in_place ? input : std::vector<uint32_t>(result.size(), 0);
  for (uint64_t b : listed)
    for (size_t i = layout.block_begin(b); i < layout.block_begin(b) + layout.block_length(b); ++i) out[i] = result[i];
  return out;
}

// Reduced blocks with zeros among their values (every third element), as
// sums of scattered inputs have: what the sparse encodings carry. A sum is
// never -0.0 (the reference adds every rank's zeros to +0.0), and the sparse
// encodings deliver a zero of either sign as +0.0.
inline std::vector<uint32_t> holey_result(size_t count, size_t block_size, uint64_t seed) {
  std::vector<uint32_t> r = test_inputs::make_block_sparse(count, block_size, 1.0, seed);
  for (size_t i = 0; i < r.size(); ++i)
    if (i % 3 == 0 || r[i] == 0x80000000u) r[i] = 0;
  return r;
}

// The shard maps the contract is held to: both layouts, and a stripe that
// does not divide the tensor.
inline ShardMap test_map(const BlockLayout& layout, int shards, bool striped) {
  return ShardMap(layout.num_blocks(), shards, striped ? ShardLayout::kStriped : ShardLayout::kContiguous, 3);
}

}  // namespace omnib::test_block_io
