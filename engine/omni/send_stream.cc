#include "engine/omni/send_stream.h"

namespace omnib {

void SendStream::begin(const OmniCall& call, int dest, uint64_t tickets) {
  found.clear();
  nonzeros.clear();
  taken.clear();
  batch_ends.clear();
  cut_to = 0;
  cut_weight = 0;
  // Posted sends point into `found`: it must never move during the call.
  if (dest < call.map.shards()) found.reserve(call.map.count(dest));
  // Twice a window: a destination may run that far ahead of the slowest.
  packed.reset(2 * (call.to_shards.send_frames + 1));
  sent = 0;
  ended = false;
  last_ticket = first_ticket = acked = tickets;
  unsent_from = 0;
  headers.resize(call.to_shards.send_frames + 1);
}

void SendStream::cut(const OmniCall& call, bool complete) {
  const BatchCut& rule = call.cut;
  size_t begin = batch_ends.empty() ? 0 : batch_ends.back();
  // Blocks below group_end share the group of the block before k.
  uint64_t group_end = cut_to > 0 ? rule.group_end(found[cut_to - 1]) : 0;
  for (; cut_to < found.size(); ++cut_to) {
    const size_t k = cut_to;
    if (k > begin && rule.starts_new_after(cut_weight, found[k] < group_end)) {
      batch_ends.push_back(k);
      begin = k;
      cut_weight = 0;
    }
    if (found[k] >= group_end) group_end = rule.group_end(found[k]);
    cut_weight += BatchCut::block_weight(call.encoding, call.layout.block_length(found[k]),
                                         nonzeros.empty() ? 0 : nonzeros[k], call.elem_size);
  }
  if (complete && found.size() > begin) batch_ends.push_back(found.size());
}

}  // namespace omnib
