// Bringing every rank's spans of one configuration to rank 0 through the
// rendezvous store. A rank's spans can outgrow one store value, so they
// travel in parts (at most kTracePartBytes each); rank 0 checks what arrives.
#pragma once

#include <string>
#include <vector>

#include "engine/bootstrap/store.h"
#include "engine/status.h"
#include "tools/trace/span_record.h"

namespace omnib {

inline constexpr size_t kTracePartBytes = 8u << 20;
// At most this many parts per rank and configuration (4 GiB of spans): a
// count past it is nonsense from a peer, refused before any round runs.
inline constexpr size_t kMaxTraceParts = 512;

// Every rank calls this with the same `name`. Rank 0 gets every rank's
// spans in rank order; the other ranks an empty vector.
Result<std::vector<RankTrace>> gather_rank_traces(Store& store, const std::string& name, int rank, int world,
                                                  const RankTrace& mine);

}  // namespace omnib
