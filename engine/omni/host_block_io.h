// WorkerBlockIo for tensors in host memory: blocks are found by a scan and
// sent from the tensor itself (no staging copy); reduced blocks are copied
// into the output, and out of place the gaps between them are zeroed as the
// stream passes them, so every output byte is written exactly once.
#pragma once

#include <vector>

#include "engine/omni/worker_block_io.h"

namespace omnib {

class HostBlockIo final : public WorkerBlockIo {
 public:
  explicit HostBlockIo(int shards);
  static Result<std::unique_ptr<WorkerBlockIo>> create(int shards);

  Status begin(const TensorView& in, const TensorView& out, const BlockLayout& layout) override;
  Result<std::span<const uint64_t>> stage(int shard, BlockRange range, bool dense) override;
  void value_iovecs(int shard, size_t pos, size_t n, std::vector<iovec>& out) override;
  Status begin_receive(int shard, BlockRange range) override;
  Status store(int shard, const BatchView& batch) override;
  Status finish_receive(int shard, BlockRange range) override;

 private:
  // Zeroes blocks [from, to) of the output unless the output is the input.
  void zero_blocks(uint64_t from, uint64_t to);

  struct Shard {
    std::vector<uint64_t> staged;  // kept between collectives: no reallocation
    uint64_t written_up_to = 0;    // receive side: blocks below are final
  };
  std::vector<Shard> shards_;
  TensorView in_;
  TensorView out_;
  BlockLayout layout_{0, 1};
  size_t elem_size_ = 4;
};

}  // namespace omnib
