// WorkerBlockIo for tensors in GPU memory (`--device cuda`).
//
// Send half: the first find() of a collective runs the one-pass compaction
// kernel over the whole tensor, writing indices and packed values straight
// into mapped pinned host memory, which the transport then sends without a
// further copy; find() then hands out the compacted blocks piece by piece,
// and value_iovecs() points into the packed values.
//
// Receive half: out of place, the output is zeroed on the device first (any
// shard layout); each arriving batch is copied into pinned staging (sparse
// encodings expanded to whole blocks on the way) and
// scattered into the output by a kernel on the same stream, asynchronously,
// so scatters overlap the next batches' network time. finish_receive waits
// for the stream.
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

  Status begin(const TensorView& in, const TensorView& out, const BlockLayout& layout,
               const ShardMap& shards) override;
  Status find(uint64_t from, uint64_t to, bool dense, std::vector<uint64_t>& found,
              std::vector<uint32_t>* nonzeros) override;
  void value_iovecs(std::span<const uint64_t> blocks, std::vector<iovec>& out) override;
  Status begin_receive() override;
  Status store(int shard, const BatchView& batch) override;
  Status finish_receive(int shard) override;

 private:
  struct SendSide {
    OwnedStream stream;
    DeviceBuffer scan_scratch;
    PinnedBuffer indices;  // uint64 per block of the tensor
    PinnedBuffer values;   // the packed blocks
    PinnedBuffer count;    // one uint64, written by the kernel
    uint64_t staged = 0;   // blocks compacted
    bool compacted = false;
    bool dense = false;    // what the compaction staged: every block, or the non-zero ones
  };
  struct ReceiveSide {
    OwnedStream stream;
    PinnedBuffer indices;  // every result block of this collective, appended
    PinnedBuffer values;
    uint64_t blocks = 0;
    size_t value_bytes = 0;
  };

  explicit CudaBlockIo(int device) : device_(device) {}
  uint8_t* element(void* tensor, uint64_t block) const;
  Status compact_all(bool dense);

  int device_;
  SendSide send_;
  ReceiveSide receive_;
  TensorView in_;
  TensorView out_;
  BlockLayout layout_{0, 1};
  size_t elem_size_ = 4;
};

}  // namespace omnib::gpu
