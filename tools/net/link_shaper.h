// The tc commands that shape one direction of one link: a token bucket (tbf)
// for the rate and, when a delay is asked for, netem in front of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/net/link_shape.h"

namespace omnib {

// Token-bucket sizes for a rate, in bytes. The burst covers 2 ms of traffic
// (so a late timer on a busy machine does not cost rate) and at least one
// 64 KiB GSO packet (so tbf need not split them); the queue holds 10 ms of
// traffic, like a switch port's buffer, and at least 4 bursts.
struct TokenBucket {
  uint64_t burst_bytes = 0;
  uint64_t limit_bytes = 0;
};
TokenBucket token_bucket_for(uint64_t rate_bps);

// Commands (argv lists, to run in order) that shape egress of `dev`; `netns`
// empty means the caller's namespace. Shaping replaces the root qdisc.
std::vector<std::vector<std::string>> shaping_commands(const std::string& netns, const std::string& dev,
                                                       const LinkShape& shape);

}  // namespace omnib
