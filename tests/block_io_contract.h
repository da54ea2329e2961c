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

namespace omnib::test_block_io {

struct StagedShard {
  std::vector<uint64_t> indices;
  std::vector<uint8_t> values;  // what value_iovecs covers, flattened
};

// Stages every shard and flattens its values in batches of `per_batch`.
inline std::vector<StagedShard> stage_all(WorkerBlockIo& io, const BlockLayout& layout, int shards, bool dense,
                                          size_t per_batch, Status* status) {
  std::vector<StagedShard> out(static_cast<size_t>(shards));
  for (int s = 0; s < shards; ++s) {
    auto staged = io.stage(s, layout.shard_range(s, shards), dense);
    if (!staged.is_ok()) {
      *status = staged.status();
      return out;
    }
    StagedShard& shard = out[static_cast<size_t>(s)];
    shard.indices.assign(staged.value().begin(), staged.value().end());
    for (size_t pos = 0; pos < shard.indices.size(); pos += per_batch) {
      std::vector<iovec> iov;
      io.value_iovecs(s, pos, std::min(per_batch, shard.indices.size() - pos), iov);
      for (const iovec& v : iov) {
        const auto* p = static_cast<const uint8_t*>(v.iov_base);
        shard.values.insert(shard.values.end(), p, p + v.iov_len);
      }
    }
  }
  *status = Status::ok();
  return out;
}

// What stage_all must find: the non-zero blocks (or all) and their bytes.
inline std::vector<StagedShard> expected_staging(const std::vector<uint32_t>& tensor, const BlockLayout& layout,
                                                 int shards, bool dense) {
  std::vector<StagedShard> out(static_cast<size_t>(shards));
  for (int s = 0; s < shards; ++s) {
    const BlockRange range = layout.shard_range(s, shards);
    StagedShard& shard = out[static_cast<size_t>(s)];
    if (dense) {
      for (uint64_t b = range.begin; b < range.end; ++b) shard.indices.push_back(b);
    } else {
      find_nonzero_blocks(tensor.data(), 4, layout, range, shard.indices);
    }
    for (uint64_t b : shard.indices) {
      const auto* p = reinterpret_cast<const uint8_t*>(tensor.data() + layout.block_begin(b));
      shard.values.insert(shard.values.end(), p, p + layout.block_length(b) * 4);
    }
  }
  return out;
}

// Stages every shard, sparse and dense, in batches of each of `batch_sizes`,
// and expects what the host reference finds in `tensor` (a host copy).
inline void expect_stages_like_reference(WorkerBlockIo& io, const std::vector<uint32_t>& tensor,
                                         const BlockLayout& layout, int shards,
                                         const std::vector<size_t>& batch_sizes) {
  for (bool dense : {false, true}) {
    const auto want = expected_staging(tensor, layout, shards, dense);
    for (size_t per_batch : batch_sizes) {
      Status st;
      auto got = stage_all(io, layout, shards, dense, per_batch, &st);
      ASSERT_TRUE(st.is_ok()) << st.message();
      for (size_t s = 0; s < got.size(); ++s) {
        EXPECT_EQ(got[s].indices, want[s].indices) << "shard " << s << " dense " << dense;
        EXPECT_EQ(got[s].values, want[s].values) << "shard " << s << " dense " << dense << " batch " << per_batch;
      }
    }
  }
}

// The blocks of `listed` that fall in shard `s`.
inline std::vector<uint64_t> blocks_of_shard(const std::vector<uint64_t>& listed, const BlockLayout& layout, int s,
                                             int shards) {
  const BlockRange r = layout.shard_range(s, shards);
  std::vector<uint64_t> mine;
  for (uint64_t b : listed)
    if (b >= r.begin && b < r.end) mine.push_back(b);
  return mine;
}

// Delivers blocks `indices` of shard `s` (values taken from `result`) to the
// receive half in batches of `per_batch`, as decoded frames would be.
inline Status deliver(WorkerBlockIo& io, int s, int shards, const BlockLayout& layout,
                      const std::vector<uint64_t>& indices, const std::vector<uint32_t>& result, size_t per_batch) {
  const BlockRange range = layout.shard_range(s, shards);
  OMNIB_RETURN_IF_ERROR(io.begin_receive(s, range));
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
  return io.finish_receive(s, range);
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

}  // namespace omnib::test_block_io
