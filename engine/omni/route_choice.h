// How the omni engine picks the route of a call under --route auto
// (engine/omni/settings/route_policy.h), the same way on every rank and without a message
// of its own: from the traffic of the call before, which every rank learns
// alike while that call runs (docs/algorithms.md, "Routes").
//
//   shards: a shard adds up the bytes every worker sent it (its own worker
//           too) and sends the sum in the tag of its last result frame;
//           every worker receives every shard's results.
//   direct: every rank receives every worker's stream (its own through the
//           in-process link) and computes the same sums, whose result
//           batches it sizes as a shard would send them (cut from the direct
//           route's budget, stream_tuning.h: below about 520 Mbit/s its
//           batches are larger, and I and R count fewer headers).
//
// With I the bytes of all workers' streams and R those of all result
// streams (frame headers included), the shards route puts about
// I (n-1)/n + R (n-1) on the wire, the direct route I (n-1). Direct is
// cheaper when (n-1) I < n R: when the workers' non-zeros barely overlap.
// Direct is taken up to 1/16 past that point: where both send about the
// same it spends less CPU (no second encode and decode of the results:
// bert-topk at block 16, 1 Gbit/s, 4 ranks on 2 cores, direct 16.6-16.9 ms
// against 19.2-20.6 for 1.6% more bytes; level at 100 Mbit/s). A route
// taken is left only when the other is ahead by a further 1/16, so the
// framing that differs between the routes cannot make it flip back and
// forth. The first call takes the shards route.
#pragma once

#include <cstdint>

#include "engine/omni/settings/route_policy.h"

namespace omnib {

struct RouteTraffic {
  uint64_t inputs = 0;   // I: every worker's stream, every destination's share counted once
  uint64_t results = 0;  // R: every shard's result stream, counted once
};

// The route of the next call. `last` is kShards or kDirect (what the call
// that produced `traffic` took); `direct_possible` is false when the job has
// dedicated aggregators or a single rank. A forced policy is obeyed.
RoutePolicy next_route(RoutePolicy policy, RoutePolicy last, const RouteTraffic& traffic, int workers,
                       bool direct_possible);

// The frame tag a shard sends I's share in: saturated to 32 bits, so a huge
// call reads as shards-friendly rather than wrapping.
uint32_t traffic_tag(uint64_t bytes);

}  // namespace omnib
