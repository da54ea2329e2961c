#include "engine/omni/cuda_block_io.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "cuda/block_compaction.cuh"
#include "cuda/block_taking.cuh"

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

}  // namespace

Result<std::unique_ptr<WorkerBlockIo>> CudaBlockIo::create(int) {
  std::string why;
  if (cuda_device_count(&why) == 0) return unavailable_error("--device cuda needs a CUDA device: " + why);
  auto device = current_device();
  if (!device.is_ok()) return device.status();
  std::unique_ptr<CudaBlockIo> io(new CudaBlockIo(device.value()));
  for (int i = 0; i < kSendStreams; ++i) {
    auto stream = OwnedStream::create();
    if (!stream.is_ok()) return stream.status();
    io->send_.streams.push_back(stream.take());
  }
  auto receive_stream = OwnedStream::create();
  if (!receive_stream.is_ok()) return receive_stream.status();
  io->receive_.stream = receive_stream.take();
  return std::unique_ptr<WorkerBlockIo>(std::move(io));
}

Status CudaBlockIo::begin(const TensorView& in, const TensorView& out, const BlockLayout& layout, const ShardMap&) {
  if (in.device != DeviceKind::kCuda || out.device != DeviceKind::kCuda)
    return usage_error("omni: --device cuda was given a host tensor");
  OMNIB_RETURN_IF_ERROR(check_gpu_block_size(layout));
  in_ = in;
  out_ = out;
  layout_ = layout;
  elem_size_ = dtype_size(in.dtype);
  send_.queued = false;
  return reserve_send_staging();
}

// Sizes the staging and the pieces for this tensor; both only ever grow.
Status CudaBlockIo::reserve_send_staging() {
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  SendSide& side = send_;
  const BlockRange all{0, layout_.num_blocks()};
  side.segment_blocks = std::max<uint64_t>(1, compaction_segment_blocks(layout_, elem_size_));
  OMNIB_RETURN_IF_ERROR(reserve_pinned(side.indices, std::max<uint64_t>(1, all.size()) * sizeof(uint64_t)));
  OMNIB_RETURN_IF_ERROR(reserve_pinned(side.nonzeros, std::max<uint64_t>(1, all.size()) * sizeof(uint32_t)));
  OMNIB_RETURN_IF_ERROR(reserve_pinned(
      side.segment_counts, std::max<uint64_t>(1, compaction_segments(layout_, elem_size_, all)) * sizeof(uint32_t)));
  OMNIB_RETURN_IF_ERROR(
      reserve_pinned(side.values, std::max<uint64_t>(1, compacted_values_capacity(layout_, all)) * elem_size_));

  const uint64_t block_bytes = std::max<uint64_t>(1, layout_.block_size() * elem_size_);
  const uint64_t segments_per_piece = std::max<uint64_t>(1, kPieceBytes / block_bytes / side.segment_blocks);
  side.piece_blocks = segments_per_piece * side.segment_blocks;
  side.active_pieces = static_cast<size_t>((all.size() + side.piece_blocks - 1) / side.piece_blocks);
  while (side.pieces.size() < side.active_pieces) {
    Piece piece;
    auto start = OwnedEvent::create(true);
    if (!start.is_ok()) return start.status();
    auto done = OwnedEvent::create(true);
    if (!done.is_ok()) return done.status();
    piece.start = start.take();
    piece.done = done.take();
    side.pieces.push_back(std::move(piece));
  }
  for (size_t k = 0; k < side.active_pieces; ++k) {
    const uint64_t first = k * side.piece_blocks;
    side.pieces[k].blocks = {first, std::min(all.end, first + side.piece_blocks)};
  }
  return Status::ok();
}

// Taking's staging, for the tensor begin() sized the rest for: a slot's
// entries hold the most elements a block of the layout can have taken.
Status CudaBlockIo::reserve_taken_staging() {
  const uint64_t entries = std::max<uint64_t>(1, layout_.num_blocks()) * taken_slot_capacity(layout_.block_size());
  OMNIB_RETURN_IF_ERROR(reserve_pinned(send_.taken_positions, entries * sizeof(uint32_t)));
  return reserve_pinned(send_.taken_values, entries * elem_size_);
}

Status CudaBlockIo::queue_pieces(bool dense, bool taking) {
  OMNIB_RETURN_IF_ERROR(use_device(device_));
  if (taking) OMNIB_RETURN_IF_ERROR(reserve_taken_staging());
  SendSide& side = send_;
  side.queued = true;
  side.dense = dense;
  side.taking = taking;
  side.cursor = 0;
  side.queued_ns = trace::now_ns();
  for (size_t k = 0; k < side.active_pieces; ++k) {
    side.pieces[k].ready = false;
    OMNIB_RETURN_IF_ERROR(queue_piece(side.pieces[k], side.streams[k % side.streams.size()].get()));
  }
  return Status::ok();
}

Status CudaBlockIo::queue_piece(Piece& piece, Stream stream) {
  SendSide& side = send_;
  const uint64_t first = piece.blocks.begin;
  const size_t value_offset = layout_.block_begin(first) * elem_size_;
  OMNIB_RETURN_IF_ERROR(piece.start.record(stream));
  CompactionOutputs out;
  out.indices = static_cast<uint64_t*>(side.indices.device()) + first;
  out.nonzeros = static_cast<uint32_t*>(side.nonzeros.device()) + first;
  out.segment_counts = static_cast<uint32_t*>(side.segment_counts.device()) + first / side.segment_blocks;
  out.values = static_cast<uint8_t*>(side.values.device()) + value_offset;
  // Dense, every block is listed: a copy of the piece, with the counts.
  OMNIB_RETURN_IF_ERROR(compact_blocks_async(in_.data, elem_size_, layout_, piece.blocks, out, stream,
                                             side.dense ? CompactionMode::kEveryBlock : CompactionMode::kNonZeroBlocks));
  if (side.taking) {
    // After the compaction on the same stream: it reads the slots just written.
    const uint64_t first_entry = first * taken_slot_capacity(layout_.block_size());
    TakenOutputs taken;
    taken.positions = static_cast<uint32_t*>(side.taken_positions.device()) + first_entry;
    taken.values = static_cast<uint8_t*>(side.taken_values.device()) + first_entry * elem_size_;
    OMNIB_RETURN_IF_ERROR(take_block_elements_async(in_.data, elem_size_, layout_, piece.blocks, out, taken, stream));
  }
  return piece.done.record(stream);
}

// Waits for every piece that starts before block `to`, in order.
Status CudaBlockIo::wait_for_pieces(uint64_t to) {
  SendSide& side = send_;
  for (size_t k = 0; k < side.active_pieces && side.pieces[k].blocks.begin < to; ++k) {
    Piece& piece = side.pieces[k];
    if (piece.ready) continue;
    OMNIB_RETURN_IF_ERROR(piece.done.wait());
    piece.ready = true;
    trace_piece(piece, k);
  }
  return Status::ok();
}

// A span for the piece's time on the GPU, on its stream's track, placed on
// the host clock from when the first piece was queued (to within the launch
// latency).
void CudaBlockIo::trace_piece(const Piece& piece, size_t index) {
  if (!trace::recording()) return;
  SendSide& side = send_;
  const size_t stream = index % side.streams.size();
  if (side.tracks.size() < side.streams.size()) side.tracks.resize(side.streams.size());
  if (!side.tracks[stream]) side.tracks[stream] = std::make_unique<trace::Track>();
  const Piece& first = side.pieces[0];
  auto begin_ms = piece.start.ms_since(first.start);
  auto end_ms = piece.done.ms_since(first.start);
  if (!begin_ms.is_ok() || !end_ms.is_ok()) return;  // timing is best effort; the data is ready
  side.tracks[stream]->enter();
  trace::name_thread("gpu stream", static_cast<int>(stream));
  trace::record("compact", trace::Kind::kCompute,
                side.queued_ns + static_cast<int64_t>(begin_ms.value() * 1e6),
                side.queued_ns + static_cast<int64_t>(end_ms.value() * 1e6), {.blocks = piece.blocks.size()});
  side.tracks[stream]->leave();
}

// Waits for the pieces that cover [from, to) and calls visit(block, slot)
// for each block the queued compaction listed there, in index order.
template <typename Visit>
Status CudaBlockIo::walk_found(uint64_t from, uint64_t to, Visit&& visit) {
  const SendSide& side = send_;
  to = std::min<uint64_t>(to, layout_.num_blocks());
  if (from >= to) return Status::ok();
  OMNIB_RETURN_IF_ERROR(wait_for_pieces(to));
  if (side.dense) {  // every segment is full: block b sits in slot b
    for (uint64_t b = from; b < to; ++b) visit(b, b);
    return Status::ok();
  }
  const uint64_t* indices = side.indices.as<uint64_t>();
  const uint64_t per_segment = side.segment_blocks;
  // Located by index, not by a cursor: a second pass over the tensor (the
  // same blocks found again before the next begin) gets what the first got.
  for_each_compacted_slot(side.segment_counts.as<uint32_t>(), per_segment, from / per_segment,
                          (to + per_segment - 1) / per_segment, [&](uint64_t slot) {
                            const uint64_t b = indices[slot];
                            if (b >= from && b < to) visit(b, slot);
                          });
  return Status::ok();
}

Status CudaBlockIo::find(uint64_t from, uint64_t to, bool dense, std::vector<uint64_t>& found,
                         std::vector<uint32_t>* nonzeros) {
  // A compaction queued with taking serves plain finds as well.
  if (!send_.queued || send_.dense != dense) OMNIB_RETURN_IF_ERROR(queue_pieces(dense, false));
  const uint32_t* counts = send_.nonzeros.as<uint32_t>();
  return walk_found(from, to, [&](uint64_t b, uint64_t slot) {
    found.push_back(b);
    if (nonzeros) nonzeros->push_back(counts[slot]);
  });
}

Status CudaBlockIo::find_taking(uint64_t from, uint64_t to, std::vector<uint64_t>& found,
                                std::vector<uint32_t>& nonzeros, FoundElements& taken) {
  if (!send_.queued || send_.dense || !send_.taking) OMNIB_RETURN_IF_ERROR(queue_pieces(false, true));
  const SendSide& side = send_;
  const uint32_t* counts = side.nonzeros.as<uint32_t>();
  const uint64_t capacity = taken_slot_capacity(layout_.block_size());
  const uint32_t* positions = side.taken_positions.as<uint32_t>();
  const uint8_t* values = side.taken_values.as<uint8_t>();
  // The pieces walk_found waits for have taken their elements too.
  return walk_found(from, to, [&](uint64_t b, uint64_t slot) {
    const uint32_t count = counts[slot];
    found.push_back(b);
    nonzeros.push_back(count);
    if (!takes_block(count, layout_.block_length(b))) {
      taken.first.push_back(FoundElements::kNotTaken);
      return;
    }
    const uint64_t entry = slot * capacity;
    taken.first.push_back(taken.positions.size());
    taken.positions.insert(taken.positions.end(), positions + entry, positions + entry + count);
    taken.values.insert(taken.values.end(), values + entry * elem_size_, values + (entry + count) * elem_size_);
  });
}

// The slot of a found block: usually the one after the last located (the
// engine asks in index order), or the first of a later segment; otherwise a
// search within its segment (at most log2(8192) steps).
uint64_t CudaBlockIo::slot_of(uint64_t block) {
  SendSide& side = send_;
  if (side.dense) return block;
  const uint64_t* indices = side.indices.as<uint64_t>();
  const uint64_t first = block / side.segment_blocks * side.segment_blocks;
  const uint64_t end = first + side.segment_counts.as<uint32_t>()[block / side.segment_blocks];
  uint64_t slot = side.cursor;
  if (slot < first || slot >= end || indices[slot] != block) {
    slot = first < end && indices[first] == block
               ? first
               : static_cast<uint64_t>(std::lower_bound(indices + first, indices + end, block) - indices);
  }
  side.cursor = slot + 1;
  return slot;
}

void CudaBlockIo::value_iovecs(std::span<const uint64_t> blocks, std::vector<iovec>& out) {
  const size_t block_bytes = layout_.block_size() * elem_size_;
  uint64_t previous = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    // Slot j's block starts at j * block_bytes; only the tensor's last block is short.
    const uint64_t b = blocks[i];
    const uint64_t slot = slot_of(b);
    const size_t len = layout_.block_length(b) * elem_size_;
    if (i > 0 && slot == previous + 1) {  // the first block always starts an iovec of its own
      out.back().iov_len += len;
    } else {
      out.push_back({send_.values.as<uint8_t>() + slot * block_bytes, len});
    }
    previous = slot;
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
