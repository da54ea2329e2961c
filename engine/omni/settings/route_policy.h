// What --route asks of the omni engine (engine/omni/route_choice.h): how a
// call's non-zeros travel. `shards` sends each block to the shard that owns
// it, which sums it and sends the sum to every worker (a parameter server:
// every non-zero crosses the wire twice); `direct` sends every worker's
// non-zeros straight to every other worker, and each sums them itself (an
// allgather: once, but to n-1 peers); auto picks per call from the traffic
// of the previous call, the same way on every rank.
#pragma once

#include <string>

namespace omnib {

enum class RoutePolicy { kAuto, kShards, kDirect };

// "auto", "shards", "direct".
const char* route_policy_name(RoutePolicy p);
bool parse_route_policy(const std::string& text, RoutePolicy* out);

}  // namespace omnib
