// Bytes a rank's emulated link transmitted, per algorithm. The rank reads the
// counter of the shaper on its own interface (inside its namespace), which
// counts every frame's Ethernet, IP and TCP headers and every ACK, as on a
// real wire. Algorithms run interleaved, so the meter keeps one window open
// at a time: the caller switches windows right after each barrier, when every
// rank has finished the previous call and so every byte of it has left the
// queues. A window thus holds one allreduce plus the next barrier's few
// hundred bytes of rendezvous traffic.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

// Set by the launcher of an emulated cluster: the rank's interface name.
constexpr const char* kLinkDeviceVar = "OMNI_BENCH_LINK_DEV";

class LinkMeter {
 public:
  // Reads a monotonically growing count of bytes sent.
  using Counter = std::function<Result<uint64_t>()>;

  // A meter for `slots` algorithms on the shaped interface named by
  // kLinkDeviceVar. kUnavailable when it is missing or cannot be read.
  static Result<std::unique_ptr<LinkMeter>> for_this_rank(size_t slots);
  // A meter of the TCP segments this rank retransmitted (tcp_retransmits.h),
  // windowed the same way.
  static Result<std::unique_ptr<LinkMeter>> retransmits_of_this_rank(size_t slots);
  // A meter on any counter (tests).
  static Result<std::unique_ptr<LinkMeter>> on(Counter counter, size_t slots);

  // Forgets all counts (call at the start of a configuration).
  void reset();
  // Credits what was sent since the last switch to the window then open, and
  // opens a window for `slot` (nullopt: traffic that belongs to no one, such
  // as warm-up).
  Status switch_to(std::optional<size_t> slot);
  // Bytes sent in `slot`'s windows since reset; nullopt when it had none.
  std::optional<uint64_t> sent(size_t slot) const;

 private:
  LinkMeter(Counter counter, size_t slots) : counter_(std::move(counter)), sent_(slots) {}

  Counter counter_;
  std::vector<std::optional<uint64_t>> sent_;
  std::optional<size_t> open_;
  uint64_t mark_ = 0;
};

}  // namespace omnib
