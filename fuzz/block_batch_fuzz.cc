// The block batch decoder (engine/omni/block_batch.cc decode_batch): a batch
// that passes names only blocks of the shard's range, in increasing order,
// and its values lie inside the payload.
//
// Input: uint32 count | uint16 block_size - 1 | uint8 log2(elem_size) (mod 4) |
//        uint8 shards - 1 (mod 16) | uint8 shard (mod shards) | 3 bytes unused | payload.
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
  (void)in.take_bytes(3);
  const std::span<const uint8_t> bytes = in.rest();
  // A received frame's payload is a heap buffer: aligned, as here.
  std::vector<uint64_t> storage((bytes.size() + 7) / 8);
  if (!bytes.empty()) std::memcpy(storage.data(), bytes.data(), bytes.size());
  const std::span<const uint8_t> payload(reinterpret_cast<const uint8_t*>(storage.data()), bytes.size());

  const BlockLayout layout(count, block_size);
  const BlockRange allowed = layout.shard_range(shard, shards);
  BatchView view;
  if (!decode_batch(payload, layout, elem_size, allowed, view).is_ok()) return 0;

  const size_t values_at = sizeof(BatchHeader) + size_t{view.count} * sizeof(uint64_t);
  if (values_at > payload.size()) fuzz::fail("indices past the payload");
  uint8_t sum = 0;
  for (uint32_t i = 0; i < view.count; ++i) {
    const uint64_t idx = view.indices[i];
    if (idx < allowed.begin || idx >= allowed.end) fuzz::fail("a block outside the shard's range");
    if (i > 0 && idx <= view.indices[i - 1]) fuzz::fail("blocks out of order");
    const size_t end = view.value_offsets[i] + layout.block_length(idx) * elem_size;
    if (values_at + end > payload.size()) fuzz::fail("a block's values past the payload");
    for (size_t b = view.value_offsets[i]; b < end; ++b) sum = static_cast<uint8_t>(sum + view.values[b]);
  }
  if (view.next != kEndOfStream && (view.next < allowed.begin || view.next >= allowed.end))
    fuzz::fail("a look-ahead outside the shard's range");
  volatile uint8_t sink = sum;  // every value byte was read (ASan checks each)
  (void)sink;
  return 0;
}
