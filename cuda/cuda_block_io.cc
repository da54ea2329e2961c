#include "cuda/cuda_block_io.h"

#include <cstring>
#include <string>

#include "cuda/block_compaction.cuh"

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

Result<std::unique_ptr<WorkerBlockIo>> CudaBlockIo::create(int shards) {
  std::string why;
  if (cuda_device_count(&why) == 0) return unavailable_error("--device cuda needs a CUDA device: " + why);
  auto device = current_device();
  if (!device.is_ok()) return device.status();
  std::unique_ptr<CudaBlockIo> io(new CudaBlockIo(device.value(), shards));
  for (int s = 0; s < shards; ++s) {
    auto send_stream = OwnedStream::create();
    if (!send_stream.is_ok()) return send_stream.status();
    io->send_[static_cast<size_t>(s)].stream = send_stream.take();
    auto receive_stream = OwnedStream::create();
    if (!receive_stream.is_ok()) return receive_stream.status();
    io->receive_[static_cast<size_t>(s)].stream = receive_stream.take();
  }
  return std::unique_ptr<WorkerBlockIo>(std::move(io));
}

uint8_t* CudaBlockIo::element(void* tensor, uint64_t block) const {
  return static_cast<uint8_t*>(tensor) + layout_.block_begin(block) * elem_size_;
}

Status CudaBlockIo::begin(const TensorView& in, const TensorView& out, const BlockLayout& layout) {
  if (in.device != DeviceKind::kCuda || out.device != DeviceKind::kCuda)
    return usage_error("omni: --device cuda was given a host tensor");
  in_ = in;
  out_ = out;
  layout_ = layout;
  elem_size_ = dtype_size(in.dtype);
  return Status::ok();
}

Result<std::span<const uint64_t>> CudaBlockIo::stage(int shard, BlockRange range, bool dense) {
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  SendSide& side = send_[static_cast<size_t>(shard)];
  OMNIB_RETURN_IF_ERROR(reserve_pinned(side.indices, std::max<uint64_t>(1, range.size()) * sizeof(uint64_t)));
  OMNIB_RETURN_IF_ERROR(
      reserve_pinned(side.values, std::max<uint64_t>(1, compacted_values_capacity(layout_, range)) * elem_size_));
  auto* indices = side.indices.as<uint64_t>();
  if (dense) {
    // Every block is sent: one copy of the range, already in packed order.
    for (uint64_t b = range.begin; b < range.end; ++b) indices[b - range.begin] = b;
    OMNIB_RETURN_IF_ERROR(copy_async(side.values.host(), element(in_.data, range.begin),
                                     layout_.elements_in(range) * elem_size_, side.stream.get()));
    OMNIB_RETURN_IF_ERROR(synchronize(side.stream.get()));
    side.staged = range.size();
    return std::span<const uint64_t>(indices, side.staged);
  }
  OMNIB_RETURN_IF_ERROR(reserve_pinned(side.count, sizeof(uint64_t)));
  const size_t scratch_bytes = compact_scratch_bytes(layout_, range);
  OMNIB_RETURN_IF_ERROR(reserve_device(side.scan_scratch, std::max<size_t>(8, scratch_bytes)));
  OMNIB_RETURN_IF_ERROR(compact_blocks_async(in_.data, elem_size_, layout_, range, side.scan_scratch.data(),
                                             scratch_bytes, static_cast<uint64_t*>(side.indices.device()),
                                             side.values.device(), static_cast<uint64_t*>(side.count.device()),
                                             side.stream.get()));
  OMNIB_RETURN_IF_ERROR(synchronize(side.stream.get()));
  side.staged = *side.count.as<uint64_t>();
  if (side.staged > range.size())
    return internal_error("compaction reported " + std::to_string(side.staged) + " blocks in a range of " +
                          std::to_string(range.size()));
  return std::span<const uint64_t>(indices, side.staged);
}

void CudaBlockIo::value_iovecs(int shard, size_t pos, size_t n, std::vector<iovec>& out) {
  if (n == 0) return;
  SendSide& side = send_[static_cast<size_t>(shard)];
  const uint64_t last = side.indices.as<uint64_t>()[pos + n - 1];
  // Packed blocks sit back to back; only the tensor's last block is short.
  auto* start = side.values.as<uint8_t>() + pos * layout_.block_size() * elem_size_;
  out.push_back({start, packed_elements(layout_, n, last) * elem_size_});
}

Status CudaBlockIo::begin_receive(int shard, BlockRange range) {
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  ReceiveSide& side = receive_[static_cast<size_t>(shard)];
  OMNIB_RETURN_IF_ERROR(reserve_pinned(side.indices, std::max<uint64_t>(1, range.size()) * sizeof(uint64_t)));
  OMNIB_RETURN_IF_ERROR(
      reserve_pinned(side.values, std::max<uint64_t>(1, compacted_values_capacity(layout_, range)) * elem_size_));
  side.blocks = 0;
  side.value_bytes = 0;
  // Blocks that no worker sends are zero in the result. In place they are
  // zero in the input already; out of place they are cleared up front, on
  // the stream that later scatters into the same range.
  if (out_.data != in_.data)
    OMNIB_RETURN_IF_ERROR(fill_async(element(out_.data, range.begin), 0, layout_.elements_in(range) * elem_size_,
                                     side.stream.get()));
  return Status::ok();
}

Status CudaBlockIo::store(int shard, const BatchView& batch) {
  if (batch.count == 0) return Status::ok();
  ReceiveSide& side = receive_[static_cast<size_t>(shard)];
  const uint64_t last = batch.indices[batch.count - 1];
  const size_t bytes = batch.value_offsets[batch.count - 1] + layout_.block_length(last) * elem_size_;
  if ((side.blocks + batch.count) * sizeof(uint64_t) > side.indices.size() ||
      side.value_bytes + bytes > side.values.size())
    return unavailable_error("result stream of shard " + std::to_string(shard) + " holds more blocks than its range");
  // Staging is append-only within a collective, so a scatter still reading
  // an earlier batch is never overwritten.
  uint64_t* indices = side.indices.as<uint64_t>() + side.blocks;
  uint8_t* values = side.values.as<uint8_t>() + side.value_bytes;
  std::memcpy(indices, batch.indices, batch.count * sizeof(uint64_t));
  std::memcpy(values, batch.values, bytes);
  const auto* device_indices = static_cast<const uint64_t*>(side.indices.device()) + side.blocks;
  const auto* device_values = static_cast<const uint8_t*>(side.values.device()) + side.value_bytes;
  side.blocks += batch.count;
  side.value_bytes += bytes;
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  const BlockRange range{batch.indices[0], last + 1};
  return scatter_blocks_async(device_indices, batch.count, device_values, elem_size_, layout_, range, out_.data,
                              ScatterMode::kListedOnly, side.stream.get());
}

Status CudaBlockIo::finish_receive(int shard, BlockRange) {
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  return synchronize(receive_[static_cast<size_t>(shard)].stream.get());
}

}  // namespace omnib::gpu
