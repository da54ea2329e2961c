// The shape of every link of an emulated cluster: rate and one-way delay,
// written the way tc writes them (100mbit, 2.5gbit, 50us). The parsers are
// shared by every command that takes --link-rate / --link-delay.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/base/status.h"

namespace omnib {

struct LinkShape {
  uint64_t rate_bps = 10'000'000'000;  // bits per second, each direction of each link
  std::chrono::nanoseconds delay{0};   // one way, each direction of each link
};

// tc-style rates: a number and a unit. bit, kbit, mbit, gbit, tbit are powers
// of 1000 bits; kibit, mibit, gibit, tibit powers of 1024 bits; bps, kbps,
// mbps, gbps, tbps are BYTES per second (as in tc). A bare number is refused
// (tc would read it as bytes per second, a common mistake). Case-insensitive.
Result<uint64_t> parse_link_rate(const std::string& text);

// A duration: a number and s, ms, us or ns (sec, msec, usec, nsec also); "0" alone is allowed.
Result<std::chrono::nanoseconds> parse_link_delay(const std::string& text);

// Short readable forms: 1000000000 -> "1gbit", 2500000000 -> "2.5gbit"; 50us -> "50us".
std::string format_link_rate(uint64_t rate_bps);
std::string format_link_delay(std::chrono::nanoseconds delay);

}  // namespace omnib
