// What a worker's send lane (worker_sender.h) keeps per destination and,
// for the destination whose slot holds a stream (every shard on the shards
// route, slot 0 on the direct route), the stream itself: its blocks in scan
// order and where its batches end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/blocks/found_elements.h"
#include "engine/omni/block_batch.h"
#include "engine/omni/omni_call.h"
#include "engine/omni/packed_batches.h"

namespace omnib {

struct SendStream {
  // The stream: this call's blocks in order (capacity fixed per call: posted
  // sends point into it), their non-zero counts unless every batch goes as
  // whole blocks, and the elements the scan took with them.
  std::vector<uint64_t> found;
  std::vector<uint32_t> nonzeros;
  FoundElements taken;
  // Its batches, cut once for all its destinations (where a batch ends
  // depends only on the data): batch k is found[batch_ends[k - 1],
  // batch_ends[k]). A batch is cut once the block after it is known, or at
  // the end; cut_to and cut_weight are the open batch's progress.
  std::vector<size_t> batch_ends;
  size_t cut_to = 0;
  uint64_t cut_weight = 0;
  PackedBatches packed;  // the stream's sparse payloads, shared by its destinations

  // The destination: how far it is sent, its send tickets (batch k is ticket
  // first_ticket + k + 1), and, in place on the direct route, the sends
  // known finished and its first block not yet sent.
  size_t sent = 0;     // of the stream's `found`
  bool ended = false;  // the batch announcing the end is posted
  uint64_t last_ticket = 0;
  uint64_t first_ticket = 0;
  uint64_t acked = 0;
  uint64_t unsent_from = 0;
  std::vector<BatchHeader> headers;  // one per send window slot: live until its send finishes

  uint64_t batches_posted() const { return last_ticket - first_ticket; }
  uint64_t batches_finished() const { return acked - first_ticket; }
  // Starts destination `dest`'s call (`tickets`: its link's sends so far).
  void begin(const OmniCall& call, int dest, uint64_t tickets);
  // Cuts the batches that the found blocks (all of them, once the scan is
  // `complete`) make whole.
  void cut(const OmniCall& call, bool complete);
};

}  // namespace omnib
