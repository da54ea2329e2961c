#include "engine/omni/host_block_io.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/blocks/block_scan.h"

namespace omnib {
namespace {

// A sparse batch is stored this many bytes of blocks at a time: zeroed, then
// its non-zeros put in, while the zeros are still in cache.
constexpr uint64_t kStorePieceBytes = 64 << 10;

}  // namespace

HostBlockIo::HostBlockIo(int shards) : written_up_to_(static_cast<size_t>(shards)) {}

Result<std::unique_ptr<WorkerBlockIo>> HostBlockIo::create(int shards) {
  return std::unique_ptr<WorkerBlockIo>(new HostBlockIo(shards));
}

Status HostBlockIo::begin(const TensorView& in, const TensorView& out, const BlockLayout& layout,
                          const ShardMap& shards) {
  if (in.device != DeviceKind::kCpu || out.device != DeviceKind::kCpu)
    return usage_error("omni: host block IO was given a device tensor");
  // A small tensor uses only some of the shards (ShardMap::active_shards),
  // the direct route one (the whole tensor in one stream).
  if (shards.shards() > static_cast<int>(written_up_to_.size()))
    return internal_error("omni: host block IO made for at most " + std::to_string(written_up_to_.size()) +
                          " shards, given " + std::to_string(shards.shards()));
  in_ = in;
  out_ = out;
  layout_ = layout;
  shards_ = shards;
  elem_size_ = dtype_size(in.dtype);
  return Status::ok();
}

Status HostBlockIo::find(uint64_t from, uint64_t to, bool dense, std::vector<uint64_t>& found,
                         std::vector<uint32_t>* nonzeros) {
  const size_t before = found.size();
  if (dense) {
    for (uint64_t b = from; b < to; ++b) found.push_back(b);
  } else if (nonzeros) {
    find_and_count_nonzero_blocks(in_.data, elem_size_, layout_, BlockRange{from, to}, found, *nonzeros);
    return Status::ok();
  } else {
    find_nonzero_blocks(in_.data, elem_size_, layout_, BlockRange{from, to}, found);
  }
  if (nonzeros) {
    const auto* base = static_cast<const uint8_t*>(in_.data);
    for (size_t i = before; i < found.size(); ++i)
      nonzeros->push_back(static_cast<uint32_t>(count_nonzero(
          base + layout_.block_begin(found[i]) * elem_size_, layout_.block_length(found[i]), elem_size_)));
  }
  return Status::ok();
}

Status HostBlockIo::find_taking(uint64_t from, uint64_t to, std::vector<uint64_t>& found,
                                std::vector<uint32_t>& nonzeros, FoundElements& taken) {
  find_count_and_take_nonzero_blocks(in_.data, elem_size_, layout_, BlockRange{from, to}, found, nonzeros, taken);
  return Status::ok();
}

void HostBlockIo::value_iovecs(std::span<const uint64_t> blocks, std::vector<iovec>& out) {
  const auto* base = static_cast<const char*>(in_.data);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const char* start = base + layout_.block_begin(blocks[i]) * elem_size_;
    const size_t len = layout_.block_length(blocks[i]) * elem_size_;
    // Adjacent blocks are contiguous in the tensor: extend the previous run.
    if (i > 0 && blocks[i] == blocks[i - 1] + 1) {
      out.back().iov_len += len;
    } else {
      out.push_back({const_cast<char*>(start), len});
    }
  }
}

Status HostBlockIo::went_back(int shard, uint64_t block, uint64_t cursor) {
  return unavailable_error("result stream of shard " + std::to_string(shard) + " went back to block " +
                           std::to_string(block) + " after block " + std::to_string(cursor - 1));
}

Status HostBlockIo::begin_receive() {
  for (auto& cursor : written_up_to_) cursor = 0;
  return Status::ok();
}

void HostBlockIo::zero_blocks(int shard, uint64_t from, uint64_t to) {
  // In place, a block nobody sent is zero in the input already.
  if (from >= to || out_.data == in_.data) return;
  auto* out = static_cast<char*>(out_.data);
  shards_.for_each_run(shard, from, to, [&](uint64_t begin, uint64_t end) {
    std::memset(out + layout_.block_begin(begin) * elem_size_, 0, layout_.elements_in({begin, end}) * elem_size_);
  });
}

Status HostBlockIo::store(int shard, const BatchView& batch) {
  uint64_t& cursor = written_up_to_[static_cast<size_t>(shard)];
  auto* out = static_cast<char*>(out_.data);
  if (batch.sparse() && batch.count > 0 && out_.data != in_.data) {
    // Out of place: the shard's blocks up to the batch's last are zeroed a
    // run of them at a time and the run's non-zeros put in place while its
    // zeros are in cache (the decoder checked that the indices increase),
    // instead of two small fills per block.
    const uint64_t first = batch.indices[0], last = batch.indices[batch.count - 1];
    if (first < cursor) return went_back(shard, first, cursor);
    const uint64_t piece = std::max<uint64_t>(1, kStorePieceBytes / (layout_.block_size() * elem_size_));
    uint32_t i = 0;
    shards_.for_each_run(shard, cursor, last + 1, [&](uint64_t run_begin, uint64_t run_end) {
      for (uint64_t begin = run_begin; begin < run_end; begin += piece) {
        const uint64_t end = std::min(run_end, begin + piece);
        zero_blocks(shard, begin, end);
        const uint32_t from = i;
        while (i < batch.count && batch.indices[i] < end) ++i;
        batch.place_elements(from, i, layout_, elem_size_, reinterpret_cast<uint8_t*>(out));
      }
    });
    cursor = last + 1;
    return Status::ok();
  }
  if (batch.sparse()) {
    // In place, each block is written whole: zeros, then its non-zero values
    // (the blocks between were zero in the input).
    for (uint32_t i = 0; i < batch.count; ++i) {
      const uint64_t b = batch.indices[i];
      if (b < cursor) return went_back(shard, b, cursor);
      zero_blocks(shard, cursor, b);
      batch.write_block(i, layout_.block_length(b), elem_size_,
                        reinterpret_cast<uint8_t*>(out + layout_.block_begin(b) * elem_size_));
      cursor = b + 1;
    }
    return Status::ok();
  }
  uint32_t i = 0;
  while (i < batch.count) {
    // A run of adjacent blocks is contiguous in the batch and in the output.
    uint32_t j = i + 1;
    while (j < batch.count && batch.indices[j] == batch.indices[j - 1] + 1) ++j;
    const uint64_t first = batch.indices[i];
    const uint64_t last = batch.indices[j - 1];
    if (first < cursor) return went_back(shard, first, cursor);
    zero_blocks(shard, cursor, first);
    std::memcpy(out + layout_.block_begin(first) * elem_size_, batch.values + batch.value_offsets[i],
                layout_.elements_in({first, last + 1}) * elem_size_);
    cursor = last + 1;
    i = j;
  }
  return Status::ok();
}

Status HostBlockIo::stored_in_place(int shard, std::span<const uint64_t> blocks) {
  uint64_t& cursor = written_up_to_[static_cast<size_t>(shard)];
  for (uint64_t b : blocks) {
    if (b < cursor) return went_back(shard, b, cursor);
    zero_blocks(shard, cursor, b);
    cursor = b + 1;
  }
  return Status::ok();
}

Status HostBlockIo::stored_range_in_place(int shard, uint64_t from, uint64_t to) {
  uint64_t& cursor = written_up_to_[static_cast<size_t>(shard)];
  if (from < cursor) return went_back(shard, from, cursor);
  zero_blocks(shard, cursor, from);
  cursor = std::max(cursor, to);
  return Status::ok();
}

Status HostBlockIo::finish_receive(int shard) {
  uint64_t& cursor = written_up_to_[static_cast<size_t>(shard)];
  zero_blocks(shard, cursor, layout_.num_blocks());
  cursor = layout_.num_blocks();
  return Status::ok();
}

}  // namespace omnib
