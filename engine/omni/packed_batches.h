// The sparse payloads of one worker stream's batches, packed once however
// many destinations read the stream: on the direct route every peer gets
// the same whole-tensor stream, and packing it per peer tripled the send
// lane's CPU at four ranks. Every destination posts the stream's batches in
// the same order (where a batch ends depends only on the data), so batch k
// is packed by the first destination to reach it and lives in slot
// k % slots() until every destination has finished sending it.
//
// Memory: slots() payloads, each at most a batch's encoded bytes (plus one
// block's worth of room, docs/algorithms.md). Used by one lane only.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/omni/batch_encoding.h"

namespace omnib {

class PackedBatches {
 public:
  struct Entry {
    uint64_t batch = kNone;  // the stream's batch number, kNone when the slot is free
    bool encoded = false;  // encoding chosen and bytes packed
    BlockEncoding encoding = BlockEncoding::kBlocks;
    UninitBytes bytes;  // empty for kBlocks: those go straight from the tensor
  };
  static constexpr uint64_t kNone = ~uint64_t{0};

  // Forgets every batch; `slots` must exceed the send window of each destination.
  void reset(size_t slots);
  size_t slots() const { return entries_.size(); }

  // Batch `batch` of the stream: the entry already packed, else a free
  // entry to pack it into (the caller sets encoding, bytes and encoded), or
  // null while a destination still sends the batch that last used the slot
  // (`finished_by_all`: the batches every destination has finished sending).
  Entry* get(uint64_t batch, uint64_t finished_by_all);

 private:
  std::vector<Entry> entries_;
};

}  // namespace omnib
