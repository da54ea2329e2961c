#include "tools/net/link_shaper.h"

#include <algorithm>
#include <cstdio>

namespace omnib {

TokenBucket token_bucket_for(uint64_t rate_bps, LinkEnd end) {
  const uint64_t bytes_per_s = rate_bps / 8;
  TokenBucket b;
  b.burst_bytes = std::max<uint64_t>(68 * 1024, bytes_per_s / 500);
  const uint64_t queue = end == LinkEnd::kSwitch ? bytes_per_s / 100 : std::max<uint64_t>(4 << 20, bytes_per_s / 50);
  b.limit_bytes = std::max<uint64_t>(4 * b.burst_bytes, queue);
  return b;
}

std::vector<std::vector<std::string>> shaping_commands(const std::string& netns, const std::string& dev,
                                                       const LinkShape& shape, LinkEnd end) {
  std::vector<std::string> tc = {"tc"};
  if (!netns.empty()) tc.insert(tc.end(), {"-n", netns});
  const TokenBucket bucket = token_bucket_for(shape.rate_bps, end);
  std::vector<std::string> tbf = {"tbf", "rate", std::to_string(shape.rate_bps) + "bit", "burst",
                                  std::to_string(bucket.burst_bytes), "limit", std::to_string(bucket.limit_bytes)};
  auto command = [&tc](std::vector<std::string> tail) {
    std::vector<std::string> argv = tc;
    argv.insert(argv.end(), tail.begin(), tail.end());
    return argv;
  };
  if (shape.delay.count() == 0) {
    std::vector<std::string> root = {"qdisc", "replace", "dev", dev, "root", "handle", "1:"};
    root.insert(root.end(), tbf.begin(), tbf.end());
    return {command(root)};
  }
  // netem holds each packet for the delay, then hands it to the rate limiter
  // (the layout of the netem documentation's rate-control example). Its own
  // queue is in packets and only needs to hold what is in flight.
  char delay_us[48];
  std::snprintf(delay_us, sizeof(delay_us), "%.3fus", static_cast<double>(shape.delay.count()) / 1e3);
  std::vector<std::string> child = {"qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:"};
  child.insert(child.end(), tbf.begin(), tbf.end());
  return {command({"qdisc", "replace", "dev", dev, "root", "handle", "1:", "netem", "delay", delay_us, "limit",
                   "100000"}),
          command(child)};
}

}  // namespace omnib
