#include "engine/omni/host_block_io.h"

#include <cstring>
#include <string>

#include "engine/block_scan.h"

namespace omnib {

HostBlockIo::HostBlockIo(int shards) : shards_(static_cast<size_t>(shards)) {}

Result<std::unique_ptr<WorkerBlockIo>> HostBlockIo::create(int shards) {
  return std::unique_ptr<WorkerBlockIo>(new HostBlockIo(shards));
}

Status HostBlockIo::begin(const TensorView& in, const TensorView& out, const BlockLayout& layout) {
  if (in.device != DeviceKind::kCpu || out.device != DeviceKind::kCpu)
    return usage_error("omni: host block IO was given a device tensor");
  in_ = in;
  out_ = out;
  layout_ = layout;
  elem_size_ = dtype_size(in.dtype);
  return Status::ok();
}

Result<std::span<const uint64_t>> HostBlockIo::stage(int shard, BlockRange range, bool dense) {
  std::vector<uint64_t>& staged = shards_[static_cast<size_t>(shard)].staged;
  staged.clear();
  if (dense) {
    for (uint64_t b = range.begin; b < range.end; ++b) staged.push_back(b);
  } else {
    find_nonzero_blocks(in_.data, elem_size_, layout_, range, staged);
  }
  return std::span<const uint64_t>(staged);
}

void HostBlockIo::value_iovecs(int shard, size_t pos, size_t n, std::vector<iovec>& out) {
  const std::vector<uint64_t>& staged = shards_[static_cast<size_t>(shard)].staged;
  const auto* base = static_cast<const char*>(in_.data);
  for (size_t i = pos; i < pos + n; ++i) {
    const char* start = base + layout_.block_begin(staged[i]) * elem_size_;
    const size_t len = layout_.block_length(staged[i]) * elem_size_;
    // Adjacent blocks are contiguous in the tensor: extend the previous run.
    if (i > pos && staged[i] == staged[i - 1] + 1) {
      out.back().iov_len += len;
    } else {
      out.push_back({const_cast<char*>(start), len});
    }
  }
}

Status HostBlockIo::begin_receive(int shard, BlockRange range) {
  shards_[static_cast<size_t>(shard)].written_up_to = range.begin;
  return Status::ok();
}

void HostBlockIo::zero_blocks(uint64_t from, uint64_t to) {
  // In place, a block nobody sent is zero in the input already.
  if (from >= to || out_.data == in_.data) return;
  const size_t elements = layout_.elements_in({from, to});
  std::memset(static_cast<char*>(out_.data) + layout_.block_begin(from) * elem_size_, 0, elements * elem_size_);
}

Status HostBlockIo::store(int shard, const BatchView& batch) {
  uint64_t& cursor = shards_[static_cast<size_t>(shard)].written_up_to;
  auto* out = static_cast<char*>(out_.data);
  uint32_t i = 0;
  while (i < batch.count) {
    // A run of adjacent blocks is contiguous in the batch and in the output.
    uint32_t j = i + 1;
    while (j < batch.count && batch.indices[j] == batch.indices[j - 1] + 1) ++j;
    const uint64_t first = batch.indices[i];
    const uint64_t last = batch.indices[j - 1];
    if (first < cursor)
      return unavailable_error("result stream went back to block " + std::to_string(first) + " after block " +
                               std::to_string(cursor - 1));
    zero_blocks(cursor, first);
    std::memcpy(out + layout_.block_begin(first) * elem_size_, batch.values + batch.value_offsets[i],
                layout_.elements_in({first, last + 1}) * elem_size_);
    cursor = last + 1;
    i = j;
  }
  return Status::ok();
}

Status HostBlockIo::finish_receive(int shard, BlockRange range) {
  uint64_t& cursor = shards_[static_cast<size_t>(shard)].written_up_to;
  zero_blocks(cursor, range.end);
  cursor = range.end;
  return Status::ok();
}

}  // namespace omnib
