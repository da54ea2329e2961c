// Parsing of byte sizes with binary suffixes (K, M, G = 2^10, 2^20, 2^30),
// as nccl-tests accepts them.
#pragma once

#include <cstdint>
#include <string>

#include "engine/status.h"

namespace omnib {

// "64M" -> 67108864. Rejects negatives, unknown suffixes and overflow.
Result<uint64_t> parse_size(const std::string& text);
// 67108864 -> "64M" when exact, else plain bytes.
std::string format_size(uint64_t bytes);
// 1.5e9 -> "1.4 GiB": for messages, not for parsing.
std::string human_bytes(double bytes);

}  // namespace omnib
