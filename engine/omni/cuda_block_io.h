// WorkerBlockIo for tensors in GPU memory (`--device cuda`).
//
// Send half: the first find() of a collective queues the compaction of the
// whole tensor in pieces of about kPieceBytes, each on one of a few streams,
// each writing its own part of mapped pinned host memory (indices, counts of
// non-zero elements, packed values), which the transport then sends without a
// further copy. find() waits only for the pieces it reads, so the first
// piece's batches are on the wire while later pieces still compact. The
// kernel's counts choose each batch's encoding (the host never reads staged
// values for that), and value_iovecs() finds a block's packed position from
// where the last one was, without a search in the usual order. When the
// engine asks for the blocks' elements too (find_taking: batches that may go
// sparse), a second kernel per piece takes each sparse block's non-zero
// elements (cuda/block_taking.cuh) into pinned staging of their own, and the
// host packs bitmaps and offsets from those without reading staged values.
//
// Receive half: out of place, the output is zeroed on the device first (any
// shard layout); each arriving batch is copied into pinned staging (sparse
// encodings expanded to whole blocks on the way) and scattered into the
// output by a kernel on the same stream, asynchronously, so scatters overlap
// the next batches' network time. finish_receive waits for the stream.
//
// Pinned staging grows to the largest tensor seen and is kept: after the
// first call of a size (a warm-up), calls allocate nothing.
//
// Plain C++ (no CUDA header), built into omnib_cuda.
#pragma once

#include <memory>
#include <vector>

#include "cuda/device_buffer.h"
#include "cuda/gpu_event.h"
#include "cuda/gpu_stream.h"
#include "engine/omni/worker_block_io.h"
#include "engine/trace/trace.h"

namespace omnib::gpu {

class CudaBlockIo final : public WorkerBlockIo {
 public:
  // Tensor bytes per compaction piece: small enough that the first batches
  // leave early, large enough that a launch is far longer than its overhead.
  static constexpr size_t kPieceBytes = size_t{16} << 20;
  // Streams the pieces are spread over, so that one piece's tail overlaps
  // the next piece's start.
  static constexpr int kSendStreams = 4;

  // Binds to the calling thread's current device (the harness selects it).
  static Result<std::unique_ptr<WorkerBlockIo>> create(int shards);

  Status begin(const TensorView& in, const TensorView& out, const BlockLayout& layout,
               const ShardMap& shards) override;
  Status find(uint64_t from, uint64_t to, bool dense, std::vector<uint64_t>& found,
              std::vector<uint32_t>* nonzeros) override;
  Status find_taking(uint64_t from, uint64_t to, std::vector<uint64_t>& found, std::vector<uint32_t>& nonzeros,
                     FoundElements& taken) override;
  void value_iovecs(std::span<const uint64_t> blocks, std::vector<iovec>& out) override;
  Status begin_receive() override;
  Status store(int shard, const BatchView& batch) override;
  Status finish_receive(int shard) override;

 private:
  // A run of blocks that compacts on one stream (dense: every block listed).
  struct Piece {
    BlockRange blocks;
    OwnedEvent start;  // timed, for the trace
    OwnedEvent done;
    bool ready = false;  // done was waited for in this collective
  };
  struct SendSide {
    std::vector<OwnedStream> streams;
    std::vector<std::unique_ptr<trace::Track>> tracks;  // a track per stream, made at the first traced call
    // A slot per block of the tensor (cuda/block_compaction.cuh).
    PinnedBuffer indices;         // uint64 per slot
    PinnedBuffer nonzeros;        // uint32 per slot
    PinnedBuffer segment_counts;  // uint32 per segment
    PinnedBuffer values;          // slot j's block from element j * B
    // Slot j's taken elements from entry j * taken_slot_capacity(B); sized
    // the first time a tensor size is taken from.
    PinnedBuffer taken_positions;  // uint32 per entry
    PinnedBuffer taken_values;
    std::vector<Piece> pieces;  // grows to the most a tensor needed; events are kept
    size_t active_pieces = 0;   // this tensor's
    uint64_t segment_blocks = 1;
    uint64_t piece_blocks = 1;  // a multiple of segment_blocks
    int64_t queued_ns = 0;      // host clock when the first piece was queued
    bool queued = false;
    bool dense = false;  // what was queued: every block, or the non-zero ones
    bool taking = false;  // and whether each piece's sparse blocks are taken too
    uint64_t cursor = 0;  // the slot after the last one value_iovecs located
  };
  struct ReceiveSide {
    OwnedStream stream;
    PinnedBuffer indices;  // every result block of this collective, appended
    PinnedBuffer values;
    uint64_t blocks = 0;
    size_t value_bytes = 0;
  };

  explicit CudaBlockIo(int device) : device_(device) {}
  Status reserve_send_staging();
  Status reserve_taken_staging();
  Status queue_pieces(bool dense, bool taking);
  Status queue_piece(Piece& piece, Stream stream);
  Status wait_for_pieces(uint64_t to);
  template <typename Visit>
  Status walk_found(uint64_t from, uint64_t to, Visit&& visit);
  void trace_piece(const Piece& piece, size_t index);
  uint64_t slot_of(uint64_t block);

  int device_;
  SendSide send_;
  ReceiveSide receive_;
  TensorView in_;
  TensorView out_;
  BlockLayout layout_{0, 1};
  size_t elem_size_ = 4;
};

}  // namespace omnib::gpu
