// The block batch decoder (engine/omni/block_batch.cc decode_batch), in every
// encoding: a batch that passes names only blocks of the shard, in increasing
// order, each non-zero's position lies inside its block (and, for offsets,
// the offset names the same element), and every value lies inside the
// payload.
//
// Input: uint32 count | uint16 block_size - 1 | uint8 log2(elem_size) (mod 4) |
//        uint8 shards - 1 (mod 16) | uint8 shard (mod shards) | uint8 layout (odd: striped) |
//        uint8 stripe - 1 | 1 byte unused | payload.
#include <cstring>
#include <vector>

#include "engine/omni/block_batch.h"
#include "fuzz/fuzz_input.h"

using namespace omnib;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInput in(data, size);
  const size_t count = in.take<uint32_t>() % (size_t{1} << 24);
  const size_t block_size = in.take<uint16_t>() % 4096 + 1;
  const size_t elem_size = size_t{1} << (in.take<uint8_t>() % 4);
  const int shards = in.take<uint8_t>() % 16 + 1;
  const int shard = in.take<uint8_t>() % shards;
  const ShardLayout layout_kind = in.take<uint8_t>() % 2 ? ShardLayout::kStriped : ShardLayout::kContiguous;
  const uint64_t stripe = in.take<uint8_t>() + 1u;
  (void)in.take_bytes(1);
  const std::span<const uint8_t> bytes = in.rest();
  // A received frame's payload is a heap buffer: aligned, as here.
  std::vector<uint64_t> storage((bytes.size() + 7) / 8);
  if (!bytes.empty()) std::memcpy(storage.data(), bytes.data(), bytes.size());
  const std::span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(storage.data()), bytes.size());

  const BlockLayout layout(count, block_size);
  const ShardMap map(layout.num_blocks(), shards, layout_kind, stripe);
  BatchView view;
  if (!decode_batch(payload, layout, elem_size, map, shard, view).is_ok()) return 0;

  const uint64_t* indices = view.indices;
  if (lists_offsets(view.encoding) && view.count > 0 && view.coo_offsets == nullptr)
    fuzz::fail("offsets of an aligned payload left out");
  if (lists_offsets(view.encoding) && view.count > 0 && indices != view.derived_indices.data())
    fuzz::fail("offsets batch without derived indices");
  if (view.sparse() && view.first.size() != size_t{view.count} + 1) fuzz::fail("no value range per block");
  if (view.sparse() && view.values + view.positions.size() * elem_size > payload.data() + payload.size())
    fuzz::fail("non-zero values past the payload");
  std::vector<uint8_t> block;
  uint8_t sum = 0;
  for (uint32_t i = 0; i < view.count; ++i) {
    const uint64_t idx = indices[i];
    if (idx >= layout.num_blocks() || map.owner(idx) != shard) fuzz::fail("a block of another shard");
    if (i > 0 && idx <= indices[i - 1]) fuzz::fail("blocks out of order");
    const size_t len = layout.block_length(idx);
    if (view.sparse()) {
      if (view.first[i] > view.first[i + 1] || view.first[i + 1] > view.positions.size())
        fuzz::fail("a block's value range out of order");
      for (uint32_t k = view.first[i]; k < view.first[i + 1]; ++k) {
        if (view.positions[k] >= len) fuzz::fail("a position past its block");
        // The aggregator's range reduction addresses offsets batches'
        // elements by their offsets: the same elements.
        if (lists_offsets(view.encoding) &&
            view.coo_base + view.coo_offsets[k] != layout.block_begin(idx) + view.positions[k])
          fuzz::fail("an offset that is not its block's position");
        if (k > view.first[i] && view.positions[k] <= view.positions[k - 1]) fuzz::fail("positions out of order");
      }
    } else if (view.values + view.value_offsets[i] + len * elem_size > payload.data() + payload.size()) {
      fuzz::fail("a block's values past the payload");
    }
    // Expanding the block reads every value it names (ASan checks each).
    block.assign(len * elem_size, 0xa5);
    view.write_block(i, len, elem_size, block.data());
    for (uint8_t b : block) sum = static_cast<uint8_t>(sum + b);
  }
  if (view.next != kEndOfStream && (view.next >= layout.num_blocks() || map.owner(view.next) != shard))
    fuzz::fail("a look-ahead of another shard");
  volatile uint8_t sink = sum;  // every value byte was read (ASan checks each)
  (void)sink;
  return 0;
}
