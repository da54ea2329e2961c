// Drives a WorkerBlockIo the way the omni engine does, for tests that hold
// the host and the device implementations to the same contract.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "engine/block_compaction.h"
#include "engine/block_scan.h"
#include "engine/omni/worker_block_io.h"
#include "engine/shard_map.h"

namespace omnib::test_block_io {

struct StagedShard {
  std::vector<uint64_t> indices;
  std::vector<uint8_t> values;  // what value_iovecs covers, flattened
};

// Finds the blocks over pieces of `piece` blocks, deals them to their shards,
// and flattens each shard's values in batches of `per_batch`, as the engine's
// send lane does.
inline std::vector<StagedShard> stage_all(WorkerBlockIo& io, const BlockLayout& layout, const ShardMap& map,
                                          bool dense, uint64_t piece, size_t per_batch, Status* status) {
  std::vector<StagedShard> out(static_cast<size_t>(map.shards()));
  std::vector<uint64_t> found;
  for (uint64_t from = 0; from < layout.num_blocks(); from += piece) {
    found.clear();
    *status = io.find(from, std::min(layout.num_blocks(), from + piece), dense, found);
    if (!status->is_ok()) return out;
    for (uint64_t b : found) out[static_cast<size_t>(map.owner(b))].indices.push_back(b);
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
          EXPECT_EQ(got[s].values, want[s].values) << "shard " << s << " dense " << dense << " batch " << per_batch;
        }
      }
    }
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
// receive half in batches of `per_batch`, as decoded frames would be, and
// ends the shard's stream. begin_receive() comes first, once for all shards.
inline Status deliver(WorkerBlockIo& io, int s, const BlockLayout& layout, const std::vector<uint64_t>& indices,
                      const std::vector<uint32_t>& result, size_t per_batch) {
  for (size_t pos = 0; pos < indices.size(); pos += per_batch) {
    const size_t n = std::min(per_batch, indices.size() - pos);
    std::vector<uint64_t> batch_indices(indices.begin() + static_cast<long>(pos),
                                        indices.begin() + static_cast<long>(pos + n));
    std::vector<uint32_t> values;
    BatchView view;
    for (uint64_t b : batch_indices) {
      view.value_offsets.push_back(values.size() * 4);
      values.insert(values.end(), result.begin() + static_cast<long>(layout.block_begin(b)),
                    result.begin() + static_cast<long>(layout.block_begin(b) + layout.block_length(b)));
    }
    view.count = static_cast<uint32_t>(n);
    view.indices = batch_indices.data();
    view.values = reinterpret_cast<const uint8_t*>(values.data());
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

// The shard maps the contract is held to: both layouts, and a stripe that
// does not divide the tensor.
inline ShardMap test_map(const BlockLayout& layout, int shards, bool striped) {
  return ShardMap(layout.num_blocks(), shards, striped ? ShardLayout::kStriped : ShardLayout::kContiguous, 3);
}

}  // namespace omnib::test_block_io
