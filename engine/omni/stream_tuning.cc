#include "engine/omni/stream_tuning.h"

#include <algorithm>
#include <bit>

#include "engine/omni/batch_encoding.h"
#include "engine/transport/frame_format.h"

namespace omnib {
namespace {

constexpr uint64_t kUnknownRateBudget = uint64_t{8} << 20;
constexpr double kBudgetSeconds = 0.004;
constexpr size_t kMinFrame = 4 << 10;
constexpr size_t kMaxFrame = wire::kStreamFrameBytes;
constexpr size_t kMinInflight = 8 << 10;
constexpr uint64_t kMinDirectBudget = 256 << 10;
// Two received frames let the receiver work on one while the next arrives;
// four posted let a sender run ahead of one slow completion.
constexpr size_t kRecvFrames = 2;
constexpr size_t kScanPieceBytes = 1 << 20;
constexpr size_t kSendFrames = 4;

}  // namespace

uint64_t receive_budget_bytes(uint64_t link_rate_bps) {
  if (link_rate_bps == 0) return kUnknownRateBudget;
  return std::max<uint64_t>(kMinInflight, static_cast<uint64_t>(static_cast<double>(link_rate_bps) / 8 * kBudgetSeconds));
}

uint64_t direct_receive_budget_bytes(uint64_t link_rate_bps) {
  return std::max<uint64_t>(kMinDirectBudget, receive_budget_bytes(link_rate_bps));
}

StreamTuning tune_streams(uint64_t link_rate_bps, int senders, uint64_t bytes_per_link, uint64_t budget_bytes) {
  const uint64_t per_link = budget_bytes / static_cast<uint64_t>(std::max(1, senders));
  StreamTuning t;
  // Half a link's share, so two frames fit its window; at most a quarter of
  // its stream, so the pipeline has frames to overlap.
  const uint64_t frame = std::min<uint64_t>(per_link / 2, std::max<uint64_t>(1, bytes_per_link / 4));
  t.frame_bytes = static_cast<size_t>(std::clamp<uint64_t>(frame, kMinFrame, kMaxFrame));
  t.recv_frames = kRecvFrames;
  t.send_frames = kSendFrames;
  t.inflight_bytes = link_rate_bps == 0 ? 0 : static_cast<size_t>(std::max<uint64_t>(per_link, kMinInflight));
  return t;
}

BatchCut BatchCut::for_blocks(size_t block_bytes, size_t frame_bytes, EncodingPolicy policy) {
  BatchCut cut;
  block_bytes = std::max<size_t>(1, block_bytes);
  cut.piece_blocks = std::max<size_t>(1, kScanPieceBytes / block_bytes);
  cut.per_batch = std::max<size_t>(1, frame_bytes / block_bytes);
  cut.batch_weight = cut.per_batch * block_bytes;
  cut.merge_pieces = policy != EncodingPolicy::kBlocks;
  cut.result_blocks = cut.merge_pieces ? kSparseResultBatches * cut.per_batch : cut.per_batch;
  cut.result_weight = cut.merge_pieces ? cut.batch_weight : ~uint64_t{0};
  return cut;
}

namespace {

// Pieces in the group that holds `piece`: 1, 1, 2, 4, ... up to the cap.
uint64_t group_width(uint64_t piece) {
  return piece < 2 ? 1 : std::min(BatchCut::kMaxGroupPieces, std::bit_floor(piece));
}

}  // namespace

uint64_t BatchCut::group_of_piece(uint64_t piece) { return piece / group_width(piece) * group_width(piece); }

uint64_t BatchCut::group_end(uint64_t block) const {
  const uint64_t piece = piece_of(block);
  return (group_of_piece(piece) + group_width(piece)) * piece_blocks;
}

uint64_t BatchCut::groups_in(uint64_t pieces) {
  uint64_t groups = 0;
  for (uint64_t p = 0; p < pieces; p = group_of_piece(p) + group_width(p)) ++groups;
  return groups;
}

uint64_t BatchCut::block_weight(EncodingPolicy policy, uint64_t length, uint64_t nonzeros, size_t elem_size) {
  const uint64_t whole = length * elem_size;
  const uint64_t bitmap = (length + 7) / 8 + nonzeros * elem_size;
  // 16-bit offsets, and a 4-byte count per page of them.
  const uint64_t offsets = nonzeros * (2 + elem_size) + length * 4 / kOffsetPageElements;
  switch (policy) {
    case EncodingPolicy::kBlocks: return whole;
    case EncodingPolicy::kBitmap: return bitmap;
    case EncodingPolicy::kCoo: return nonzeros ? offsets : bitmap;
    case EncodingPolicy::kAuto: break;
  }
  return std::min({whole, bitmap, nonzeros ? offsets : whole});
}

}  // namespace omnib
