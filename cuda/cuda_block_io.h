// WorkerBlockIo for tensors in GPU memory (`--device cuda`).
//
// Send half: each shard's send lane runs the one-pass compaction kernel over
// its range on its own stream, writing indices and packed values straight
// into mapped pinned host memory, which the transport then sends without a
// further copy. Shards compact concurrently, so the first shard's batches
// are on the wire while later shards are still being compacted.
//
// Receive half: out of place, the shard's range of the output is zeroed on
// the device first; each arriving batch is copied into pinned staging and
// scattered into the output by a kernel, asynchronously, so scatters overlap
// the next batches' network time. finish_receive waits for the stream.
//
// Plain C++ (no CUDA header), built into omnib_cuda.
#pragma once

#include <memory>
#include <vector>

#include "cuda/device_buffer.h"
#include "cuda/gpu_stream.h"
#include "engine/omni/worker_block_io.h"

namespace omnib::gpu {

class CudaBlockIo final : public WorkerBlockIo {
 public:
  // Binds to the calling thread's current device (the harness selects it).
  static Result<std::unique_ptr<WorkerBlockIo>> create(int shards);

  Status begin(const TensorView& in, const TensorView& out, const BlockLayout& layout) override;
  Result<std::span<const uint64_t>> stage(int shard, BlockRange range, bool dense) override;
  void value_iovecs(int shard, size_t pos, size_t n, std::vector<iovec>& out) override;
  Status begin_receive(int shard, BlockRange range) override;
  Status store(int shard, const BatchView& batch) override;
  Status finish_receive(int shard, BlockRange range) override;

 private:
  struct SendSide {
    OwnedStream stream;
    DeviceBuffer scan_scratch;
    PinnedBuffer indices;  // uint64 per block of the range
    PinnedBuffer values;   // the packed blocks
    PinnedBuffer count;    // one uint64, written by the kernel
    uint64_t staged = 0;
  };
  struct ReceiveSide {
    OwnedStream stream;
    PinnedBuffer indices;  // every result block of this collective, appended
    PinnedBuffer values;
    uint64_t blocks = 0;
    size_t value_bytes = 0;
  };

  explicit CudaBlockIo(int device, int shards) : device_(device), send_(shards), receive_(shards) {}
  uint8_t* element(void* tensor, uint64_t block) const;

  int device_;
  std::vector<SendSide> send_;
  std::vector<ReceiveSide> receive_;
  TensorView in_;
  TensorView out_;
  BlockLayout layout_{0, 1};
  size_t elem_size_ = 4;
};

}  // namespace omnib::gpu
