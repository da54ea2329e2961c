// WorkerBlockIo for tensors in host memory: blocks are found by a scan and
// sent from the tensor itself (no staging copy); reduced blocks are copied
// into the output, and out of place each shard's blocks between received
// ones are zeroed as its stream passes them, so every output byte is written
// exactly once.
#pragma once

#include <vector>

#include "engine/omni/worker_block_io.h"

namespace omnib {

class HostBlockIo final : public WorkerBlockIo {
 public:
  explicit HostBlockIo(int shards);
  static Result<std::unique_ptr<WorkerBlockIo>> create(int shards);

  Status begin(const TensorView& in, const TensorView& out, const BlockLayout& layout,
               const ShardMap& shards) override;
  Status find(uint64_t from, uint64_t to, bool dense, std::vector<uint64_t>& found,
              std::vector<uint32_t>* nonzeros) override;
  // Takes the elements of sparse blocks as it scans them (block_scan.h).
  Status find_taking(uint64_t from, uint64_t to, std::vector<uint64_t>& found, std::vector<uint32_t>& nonzeros,
                     FoundElements& taken) override;
  void value_iovecs(std::span<const uint64_t> blocks, std::vector<iovec>& out) override;
  Status begin_receive() override;
  Status store(int shard, const BatchView& batch) override;
  Status finish_receive(int shard) override;
  uint8_t* host_output() override { return static_cast<uint8_t*>(out_.data); }
  Status stored_in_place(int shard, std::span<const uint64_t> blocks) override;
  Status stored_range_in_place(int shard, uint64_t from, uint64_t to) override;

 private:
  // Zeroes the shard's blocks in [from, to) unless the output is the input.
  void zero_blocks(int shard, uint64_t from, uint64_t to);
  static Status went_back(int shard, uint64_t block, uint64_t cursor);

  std::vector<uint64_t> written_up_to_;  // per shard: its blocks below are final
  TensorView in_;
  TensorView out_;
  BlockLayout layout_{0, 1};
  ShardMap shards_;
  size_t elem_size_ = 4;
};

}  // namespace omnib
