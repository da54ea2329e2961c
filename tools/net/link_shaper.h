// The tc commands that shape one direction of one link: a token bucket (tbf)
// for the rate and, when a delay is asked for, netem in front of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/config/link_shape.h"

namespace omnib {

// Which end of a rank's link a qdisc sits on; their queues differ.
enum class LinkEnd {
  kRank,    // the rank's own sending side: a host NIC queue, deep, so the
            // rank's TCP is held back instead of losing packets locally
  kSwitch,  // the bridge's port towards the rank: a switch port buffer
            // (10 ms of traffic, tail drop), where incast shows up
};

// Token-bucket sizes for a rate, in bytes. The burst covers 2 ms of traffic
// (so a late timer on a busy machine does not cost rate) and at least one
// 64 KiB GSO packet (so tbf need not split them). The queue holds at least 4
// bursts, and 10 ms of traffic at a switch port or 20 ms (at least 4 MiB) at
// the rank.
struct TokenBucket {
  uint64_t burst_bytes = 0;
  uint64_t limit_bytes = 0;
};
TokenBucket token_bucket_for(uint64_t rate_bps, LinkEnd end);

// Commands (argv lists, to run in order) that shape egress of `dev`, one
// `end` of a link; `netns` empty means the caller's namespace. Shaping
// replaces the root qdisc.
std::vector<std::vector<std::string>> shaping_commands(const std::string& netns, const std::string& dev,
                                                       const LinkShape& shape, LinkEnd end);

}  // namespace omnib
