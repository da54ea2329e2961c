#include "engine/omni/packed_batches.h"

namespace omnib {

void PackedBatches::reset(size_t slots) {
  entries_.resize(slots);
  for (Entry& e : entries_) e.batch = kNone;
}

PackedBatches::Entry* PackedBatches::get(uint64_t batch, uint64_t finished_by_all) {
  Entry& e = entries_[batch % entries_.size()];
  if (e.batch == batch) return &e;
  // The slot's last batch is batch - slots() or older: reusable once every
  // destination has finished sending it.
  if (e.batch != kNone && e.batch >= finished_by_all) return nullptr;
  e.batch = batch;
  e.encoded = false;
  e.bytes.clear();
  return &e;
}

}  // namespace omnib
