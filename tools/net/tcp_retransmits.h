// TCP segments this network namespace has retransmitted (the kernel's
// Tcp RetransSegs in /proc/self/net/snmp). An emulated rank is alone in its
// namespace, so the count is its own: packets its links lost (a switch port
// that overflowed under incast) or that its TCP gave up waiting for.
#pragma once

#include <cstdint>
#include <string>

#include "engine/base/status.h"

namespace omnib {

// Unavailable when the file is missing or holds no RetransSegs.
Result<uint64_t> tcp_retransmitted_segments();

// The count from snmp's text (the "Tcp:" header line, then its values).
Result<uint64_t> parse_tcp_retransmits(const std::string& snmp);

}  // namespace omnib
