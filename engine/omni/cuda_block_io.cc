#include "engine/omni/cuda_block_io.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "cuda/block_compaction.cuh"
#include "engine/blocks/block_scan.h"

namespace omnib::gpu {
namespace {

// Grow a buffer to hold at least `bytes`; contents are not kept.
Status reserve_pinned(PinnedBuffer& buffer, size_t bytes) {
  if (buffer.size() >= bytes) return Status::ok();
  buffer = PinnedBuffer();  // free first: the old and new buffers may not both fit
  auto grown = PinnedBuffer::allocate(bytes);
  if (!grown.is_ok()) return grown.status();
  buffer = grown.take();
  return Status::ok();
}

Status reserve_device(DeviceBuffer& buffer, size_t bytes) {
  if (buffer.size() >= bytes) return Status::ok();
  buffer = DeviceBuffer();
  auto grown = DeviceBuffer::allocate(bytes);
  if (!grown.is_ok()) return grown.status();
  buffer = grown.take();
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<WorkerBlockIo>> CudaBlockIo::create(int) {
  std::string why;
  if (cuda_device_count(&why) == 0) return unavailable_error("--device cuda needs a CUDA device: " + why);
  auto device = current_device();
  if (!device.is_ok()) return device.status();
  std::unique_ptr<CudaBlockIo> io(new CudaBlockIo(device.value()));
  auto send_stream = OwnedStream::create();
  if (!send_stream.is_ok()) return send_stream.status();
  io->send_.stream = send_stream.take();
  auto receive_stream = OwnedStream::create();
  if (!receive_stream.is_ok()) return receive_stream.status();
  io->receive_.stream = receive_stream.take();
  return std::unique_ptr<WorkerBlockIo>(std::move(io));
}

uint8_t* CudaBlockIo::element(void* tensor, uint64_t block) const {
  return static_cast<uint8_t*>(tensor) + layout_.block_begin(block) * elem_size_;
}

Status CudaBlockIo::begin(const TensorView& in, const TensorView& out, const BlockLayout& layout, const ShardMap&) {
  if (in.device != DeviceKind::kCuda || out.device != DeviceKind::kCuda)
    return usage_error("omni: --device cuda was given a host tensor");
  in_ = in;
  out_ = out;
  layout_ = layout;
  elem_size_ = dtype_size(in.dtype);
  send_.compacted = false;
  send_.staged = 0;
  return Status::ok();
}

Status CudaBlockIo::compact_all(bool dense) {
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  SendSide& side = send_;
  const BlockRange all{0, layout_.num_blocks()};
  OMNIB_RETURN_IF_ERROR(reserve_pinned(side.indices, std::max<uint64_t>(1, all.size()) * sizeof(uint64_t)));
  OMNIB_RETURN_IF_ERROR(
      reserve_pinned(side.values, std::max<uint64_t>(1, compacted_values_capacity(layout_, all)) * elem_size_));
  auto* indices = side.indices.as<uint64_t>();
  side.compacted = true;
  side.dense = dense;
  if (dense) {
    // Every block is sent: one copy of the tensor, already in packed order.
    for (uint64_t b = 0; b < all.end; ++b) indices[b] = b;
    OMNIB_RETURN_IF_ERROR(copy_async(side.values.host(), in_.data, layout_.count() * elem_size_, side.stream.get()));
    OMNIB_RETURN_IF_ERROR(synchronize(side.stream.get()));
    side.staged = all.size();
    return Status::ok();
  }
  OMNIB_RETURN_IF_ERROR(reserve_pinned(side.count, sizeof(uint64_t)));
  const size_t scratch_bytes = compact_scratch_bytes(layout_, all);
  OMNIB_RETURN_IF_ERROR(reserve_device(side.scan_scratch, std::max<size_t>(8, scratch_bytes)));
  OMNIB_RETURN_IF_ERROR(compact_blocks_async(in_.data, elem_size_, layout_, all, side.scan_scratch.data(),
                                             scratch_bytes, static_cast<uint64_t*>(side.indices.device()),
                                             side.values.device(), static_cast<uint64_t*>(side.count.device()),
                                             side.stream.get()));
  OMNIB_RETURN_IF_ERROR(synchronize(side.stream.get()));
  side.staged = *side.count.as<uint64_t>();
  if (side.staged > all.size())
    return internal_error("compaction reported " + std::to_string(side.staged) + " blocks in a tensor of " +
                          std::to_string(all.size()));
  return Status::ok();
}

Status CudaBlockIo::find(uint64_t from, uint64_t to, bool dense, std::vector<uint64_t>& found,
                         std::vector<uint32_t>* nonzeros) {
  if (!send_.compacted || send_.dense != dense) OMNIB_RETURN_IF_ERROR(compact_all(dense));
  const uint64_t* indices = send_.indices.as<uint64_t>();
  const uint64_t* staged_end = indices + send_.staged;
  const size_t block_bytes = layout_.block_size() * elem_size_;
  // Located by index, not by a cursor: a second pass over the tensor (the
  // same blocks found again before the next begin) gets what the first got.
  for (const uint64_t* at = std::lower_bound(indices, staged_end, from); at != staged_end && *at < to; ++at) {
    const uint64_t b = *at;
    if (nonzeros)
      nonzeros->push_back(static_cast<uint32_t>(count_nonzero(
          send_.values.as<uint8_t>() + static_cast<size_t>(at - indices) * block_bytes, layout_.block_length(b),
          elem_size_)));
    found.push_back(b);
  }
  return Status::ok();
}

void CudaBlockIo::value_iovecs(std::span<const uint64_t> blocks, std::vector<iovec>& out) {
  const uint64_t* indices = send_.indices.as<uint64_t>();
  const size_t block_bytes = layout_.block_size() * elem_size_;
  uint64_t previous = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    // Packed blocks sit back to back in index order; only the tensor's last is short.
    const uint64_t b = blocks[i];
    const uint64_t pos = static_cast<uint64_t>(std::lower_bound(indices, indices + send_.staged, b) - indices);
    const size_t len = layout_.block_length(b) * elem_size_;
    if (i > 0 && pos == previous + 1) {  // the first block always starts an iovec of its own
      out.back().iov_len += len;
    } else {
      out.push_back({send_.values.as<uint8_t>() + pos * block_bytes, len});
    }
    previous = pos;
  }
}

Status CudaBlockIo::begin_receive() {
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  ReceiveSide& side = receive_;
  const BlockRange all{0, layout_.num_blocks()};
  OMNIB_RETURN_IF_ERROR(reserve_pinned(side.indices, std::max<uint64_t>(1, all.size()) * sizeof(uint64_t)));
  OMNIB_RETURN_IF_ERROR(
      reserve_pinned(side.values, std::max<uint64_t>(1, compacted_values_capacity(layout_, all)) * elem_size_));
  side.blocks = 0;
  side.value_bytes = 0;
  // Blocks that no worker sends are zero in the result. In place they are
  // zero in the input already; out of place the output is cleared up front,
  // on the stream that later scatters into it.
  if (out_.data != in_.data)
    OMNIB_RETURN_IF_ERROR(fill_async(out_.data, 0, layout_.count() * elem_size_, side.stream.get()));
  return Status::ok();
}

Status CudaBlockIo::store(int shard, const BatchView& batch) {
  if (batch.count == 0) return Status::ok();
  ReceiveSide& side = receive_;
  const uint64_t last = batch.indices[batch.count - 1];
  size_t bytes = 0;
  for (uint32_t i = 0; i < batch.count; ++i) bytes += layout_.block_length(batch.indices[i]) * elem_size_;
  if ((side.blocks + batch.count) * sizeof(uint64_t) > side.indices.size() ||
      side.value_bytes + bytes > side.values.size())
    return unavailable_error("result streams hold more blocks than the tensor (shard " + std::to_string(shard) + ")");
  // Staging is append-only within a collective, so a scatter still reading
  // an earlier batch is never overwritten.
  uint64_t* indices = side.indices.as<uint64_t>() + side.blocks;
  uint8_t* values = side.values.as<uint8_t>() + side.value_bytes;
  std::memcpy(indices, batch.indices, batch.count * sizeof(uint64_t));
  if (batch.sparse()) {
    uint8_t* at = values;
    for (uint32_t i = 0; i < batch.count; ++i) {
      const size_t len = layout_.block_length(batch.indices[i]);
      batch.write_block(i, len, elem_size_, at);
      at += len * elem_size_;
    }
  } else {
    std::memcpy(values, batch.values, bytes);
  }
  const auto* device_indices = static_cast<const uint64_t*>(side.indices.device()) + side.blocks;
  const auto* device_values = static_cast<const uint8_t*>(side.values.device()) + side.value_bytes;
  side.blocks += batch.count;
  side.value_bytes += bytes;
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  const BlockRange range{batch.indices[0], last + 1};
  return scatter_blocks_async(device_indices, batch.count, device_values, elem_size_, layout_, range, out_.data,
                              ScatterMode::kListedOnly, side.stream.get());
}

Status CudaBlockIo::finish_receive(int) {
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  return synchronize(receive_.stream.get());
}

}  // namespace omnib::gpu
