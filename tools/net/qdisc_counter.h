// Bytes an interface's root qdisc has sent, read over rtnetlink (what
// `tc -s qdisc show` prints as "Sent N bytes"). Unlike the interface's
// tx_bytes, which counts one header per 64 KiB GSO packet, the qdisc counts
// the headers of every frame the packet becomes on the wire.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/base/status.h"

namespace omnib {

class QdiscCounter {
 public:
  // A counter for `device` in this process's network namespace.
  static Result<std::unique_ptr<QdiscCounter>> open(const std::string& device);
  ~QdiscCounter();
  QdiscCounter(const QdiscCounter&) = delete;
  QdiscCounter& operator=(const QdiscCounter&) = delete;

  // Bytes sent by the root qdisc so far. Blocks for one netlink round trip
  // (tens of microseconds). Not thread-safe.
  Result<uint64_t> sent_bytes();

 private:
  QdiscCounter(std::string device, int ifindex, int fd) : device_(std::move(device)), ifindex_(ifindex), fd_(fd) {}

  std::string device_;
  int ifindex_;
  int fd_;
  uint32_t seq_ = 0;
};

}  // namespace omnib
