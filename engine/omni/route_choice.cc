#include "engine/omni/route_choice.h"

#include <algorithm>
#include <limits>

namespace omnib {

RoutePolicy next_route(RoutePolicy policy, RoutePolicy last, const RouteTraffic& traffic, int workers,
                       bool direct_possible) {
  if (!direct_possible) return RoutePolicy::kShards;
  if (policy != RoutePolicy::kAuto) return policy;
  // Direct costs (n-1) I, shards n R in the same units; compared in
  // sixteenths. Direct is preferred by 1/16 (where the two send the same it
  // skips the shards' second encode and decode), with 1/16 of hysteresis on
  // the side of the route taken.
  const auto n = static_cast<unsigned __int128>(workers);
  const unsigned __int128 direct = 16 * (n - 1) * traffic.inputs;
  const unsigned __int128 shards = n * traffic.results;
  const unsigned __int128 margin = last == RoutePolicy::kDirect ? 18 : 17;
  return direct < margin * shards ? RoutePolicy::kDirect : RoutePolicy::kShards;
}

uint32_t traffic_tag(uint64_t bytes) {
  return static_cast<uint32_t>(std::min<uint64_t>(bytes, std::numeric_limits<uint32_t>::max()));
}

}  // namespace omnib
