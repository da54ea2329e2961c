#include "engine/omni/block_batch.h"

#include <cstring>
#include <string>

#include "engine/transport/frame_format.h"

namespace omnib {

Status decode_batch(std::span<const uint8_t> payload, const BlockLayout& layout, size_t elem_size,
                    const ShardMap& shards, int shard, BatchView& out) {
  const uint64_t nb = layout.num_blocks();
  auto owned = [&](uint64_t idx) { return idx < nb && shards.owner(idx) == shard; };
  if (payload.size() < sizeof(BatchHeader)) return unavailable_error("block batch shorter than its header");
  BatchHeader h;
  std::memcpy(&h, payload.data(), sizeof(h));
  const uint64_t index_bytes = uint64_t{h.count} * sizeof(uint64_t);
  if (payload.size() < sizeof(BatchHeader) + index_bytes)
    return unavailable_error("block batch announces " + std::to_string(h.count) + " blocks but is too short");
  out.count = h.count;
  out.next = h.next;
  out.indices = reinterpret_cast<const uint64_t*>(payload.data() + sizeof(BatchHeader));
  out.values = payload.data() + sizeof(BatchHeader) + index_bytes;
  out.value_offsets.resize(h.count);
  size_t offset = 0;
  uint64_t previous = 0;
  for (uint32_t i = 0; i < h.count; ++i) {
    uint64_t idx = out.indices[i];
    if (!owned(idx) || (i > 0 && idx <= previous))
      return unavailable_error("block batch holds block " + std::to_string(idx) +
                               " out of order or not of shard " + std::to_string(shard));
    previous = idx;
    out.value_offsets[i] = offset;
    offset += layout.block_length(idx) * elem_size;
  }
  if (h.count > 0 && h.next != kEndOfStream && h.next <= previous)
    return unavailable_error("block batch look-ahead index does not follow its last block");
  if (h.next != kEndOfStream && !owned(h.next))
    return unavailable_error("block batch look-ahead index is not a block of shard " + std::to_string(shard));
  if (payload.size() != sizeof(BatchHeader) + index_bytes + offset)
    return unavailable_error("block batch size " + std::to_string(payload.size()) + " does not match its blocks");
  return Status::ok();
}

void batch_prefix_iovecs(const BatchHeader& header, std::span<const uint64_t> indices, std::vector<iovec>& out) {
  out.clear();
  out.push_back({const_cast<BatchHeader*>(&header), sizeof(BatchHeader)});
  if (!indices.empty()) out.push_back({const_cast<uint64_t*>(indices.data()), indices.size() * sizeof(uint64_t)});
}

uint64_t batch_wire_bytes(uint64_t blocks, uint64_t value_bytes) {
  return sizeof(wire::FrameHeader) + sizeof(BatchHeader) + blocks * sizeof(uint64_t) + value_bytes;
}

}  // namespace omnib
