// Byte sizes and byte counts as text: the one parser of sizes (binary
// suffixes K, M, G = 2^10, 2^20, 2^30, as nccl-tests accepts them), the
// series of sizes a run covers, and the one formatter of measured bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

// "64M" -> 67108864. Rejects negatives, unknown suffixes and overflow.
Result<uint64_t> parse_size(const std::string& text);
// 67108864 -> "64M" when exact, else plain bytes: the text parse_size reads back.
std::string format_size(uint64_t bytes);
// A measured or modelled amount of bytes for people: 11302912 -> "11.30 MB"
// (decimal units, GB = 1e9 bytes, as bandwidths are quoted).
std::string format_bytes(double bytes);

// The sizes a run covers: an explicit list (`--sizes`), or -b/-e/-f.
struct SizeSeriesSpec {
  std::string list;  // "1M,4M"; when empty, the series below
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  double step_factor = 2;
  size_t element_bytes = 4;  // sizes round down to whole elements
};

// At most this many sizes in one run.
constexpr size_t kMaxSizes = 1000;

// Sizes in bytes, whole elements, increasing and distinct. Usage errors (which
// name the flag and the fix) for sizes that do not parse, -b above -e, a size
// of no whole element (-b 0), a step factor of 1 or less between different
// -b and -e, a series with more than kMaxSizes steps, or one whose step does
// not advance by at least one element.
Result<std::vector<uint64_t>> size_series(const SizeSeriesSpec& spec);

}  // namespace omnib
