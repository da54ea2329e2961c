#include "engine/omni/settings/route_policy.h"

namespace omnib {

const char* route_policy_name(RoutePolicy p) {
  switch (p) {
    case RoutePolicy::kAuto: return "auto";
    case RoutePolicy::kShards: return "shards";
    case RoutePolicy::kDirect: return "direct";
  }
  return "?";
}

bool parse_route_policy(const std::string& text, RoutePolicy* out) {
  for (RoutePolicy p : {RoutePolicy::kAuto, RoutePolicy::kShards, RoutePolicy::kDirect})
    if (text == route_policy_name(p)) {
      *out = p;
      return true;
    }
  return false;
}

}  // namespace omnib
