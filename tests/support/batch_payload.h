// Tests' batch builder: the wire payload of a batch of a tensor's blocks
// (header, then the index array or the offsets' head, then the values), in
// a given encoding, packed by the engine's own pack_sparse.
#pragma once

#include <gtest/gtest.h>
#include <sys/uio.h>

#include <span>
#include <vector>

#include "engine/blocks/block_scan.h"
#include "engine/omni/batch_encoding.h"
#include "engine/omni/block_batch.h"

namespace omnib {

struct BuiltBatch {
  std::vector<uint8_t> payload;
  BatchShape shape;  // of the blocks, their non-zeros counted
};

inline BuiltBatch build_batch(BlockEncoding encoding, std::span<const uint64_t> blocks, const uint8_t* tensor,
                              const BlockLayout& layout, size_t elem, uint64_t next) {
  BuiltBatch b;
  std::vector<iovec> values;
  for (uint64_t blk : blocks) {
    const uint8_t* at = tensor + layout.block_begin(blk) * elem;
    values.push_back({const_cast<uint8_t*>(at), layout.block_length(blk) * elem});
    b.shape.add_block(layout.block_begin(blk), layout.block_length(blk), count_nonzero(at, layout.block_length(blk), elem));
  }
  const BatchHeader h{static_cast<uint32_t>(blocks.size()), static_cast<uint32_t>(encoding), next};
  std::vector<iovec> iov;
  batch_prefix_iovecs(h, blocks, iov);
  UninitBytes packed;
  if (encoding == BlockEncoding::kBlocks) {
    iov.insert(iov.end(), values.begin(), values.end());
  } else {
    const Status packed_ok = pack_sparse(encoding, blocks, layout, elem, b.shape.nonzeros, values, packed);
    EXPECT_TRUE(packed_ok.is_ok()) << packed_ok.message();
    iov.push_back({packed.data(), packed.size()});
  }
  for (const iovec& v : iov)
    b.payload.insert(b.payload.end(), static_cast<const uint8_t*>(v.iov_base),
                     static_cast<const uint8_t*>(v.iov_base) + v.iov_len);
  return b;
}

}  // namespace omnib
