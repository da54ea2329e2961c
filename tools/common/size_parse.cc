#include "tools/common/size_parse.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace omnib {

Result<uint64_t> parse_size(const std::string& text) {
  const std::string hint = "size '" + text + "' is not valid: use a whole number of bytes with an optional K, M or G suffix (e.g. 64M)";
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return usage_error(hint);
  size_t pos = 0;
  uint64_t value = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    uint64_t digit = static_cast<uint64_t>(text[pos] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10)
      return usage_error("size '" + text + "' overflows 64 bits");
    value = value * 10 + digit;
    ++pos;
  }
  int shift = 0;
  if (pos < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[pos]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: return usage_error(hint);
    }
    ++pos;
    if (pos < text.size() && (text[pos] == 'B' || text[pos] == 'b')) ++pos;  // "64MB" reads as 64M
  }
  if (pos != text.size()) return usage_error(hint);
  if (shift && value > (std::numeric_limits<uint64_t>::max() >> shift))
    return usage_error("size '" + text + "' overflows 64 bits");
  return value << shift;
}

std::string format_size(uint64_t bytes) {
  const char* suffix[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (i < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++i;
  }
  return std::to_string(bytes) + suffix[i];
}

std::string format_bytes(double bytes) {
  const char* unit[] = {"B", "kB", "MB", "GB", "TB"};
  int i = 0;
  while (i < 4 && bytes >= 1000) {
    bytes /= 1000;
    ++i;
  }
  char buf[32];
  if (i == 0)
    std::snprintf(buf, sizeof(buf), "%.0f B", bytes);
  else
    std::snprintf(buf, sizeof(buf), "%.2f %s", bytes, unit[i]);
  return buf;
}

namespace {

std::string element_text(size_t element_bytes) {
  return std::to_string(element_bytes) + "-byte element";
}

Result<std::vector<uint64_t>> listed_sizes(const SizeSeriesSpec& spec) {
  std::vector<uint64_t> sizes;
  size_t start = 0;
  while (start <= spec.list.size()) {
    const size_t comma = std::min(spec.list.find(',', start), spec.list.size());
    const std::string item = spec.list.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    auto bytes = parse_size(item);
    if (!bytes.is_ok()) return bytes.status().with_context("--sizes: ");
    const uint64_t whole = bytes.value() / spec.element_bytes * spec.element_bytes;
    if (whole == 0)
      return usage_error("--sizes: " + item + " holds no whole " + element_text(spec.element_bytes) +
                         ": give sizes of at least " + std::to_string(spec.element_bytes) + " bytes");
    sizes.push_back(whole);
  }
  if (sizes.empty()) return usage_error("--sizes is empty: give a comma list of sizes, e.g. 1M,4M");
  if (sizes.size() > kMaxSizes)
    return usage_error("--sizes lists " + std::to_string(sizes.size()) + " sizes: at most " +
                       std::to_string(kMaxSizes) + " per run");
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

}  // namespace

Result<std::vector<uint64_t>> size_series(const SizeSeriesSpec& spec) {
  if (spec.element_bytes == 0) return internal_error("size series: element size 0");
  if (!spec.list.empty()) return listed_sizes(spec);
  auto lo = parse_size(spec.min_bytes);
  if (!lo.is_ok()) return lo.status().with_context("-b/--minbytes: ");
  auto hi = parse_size(spec.max_bytes);
  if (!hi.is_ok()) return hi.status().with_context("-e/--maxbytes: ");
  if (lo.value() > hi.value())
    return usage_error("-b/--minbytes (" + spec.min_bytes + ") is larger than -e/--maxbytes (" + spec.max_bytes + ")");
  const uint64_t e = spec.element_bytes;
  if (lo.value() / e == 0)
    return usage_error("-b/--minbytes " + spec.min_bytes + " holds no whole " + element_text(e) + ": give at least " +
                       std::to_string(e) + " bytes");
  std::vector<uint64_t> sizes{lo.value() / e * e};
  if (lo.value() == hi.value()) return sizes;
  if (!(spec.step_factor > 1) || !std::isfinite(spec.step_factor))
    return usage_error("-f/--stepfactor must be greater than 1 when -b and -e differ (2 doubles the size each step)");
  const long double steps = std::floor(std::log(static_cast<long double>(hi.value()) / lo.value()) /
                                       std::log(static_cast<long double>(spec.step_factor))) + 1;
  if (steps > kMaxSizes)
    return usage_error("-f/--stepfactor " + std::to_string(spec.step_factor) + " makes about " +
                       std::to_string(static_cast<uint64_t>(steps)) + " sizes between -b and -e: at most " +
                       std::to_string(kMaxSizes) + " per run; raise -f or narrow -b/-e");
  for (long double s = static_cast<long double>(lo.value()) * spec.step_factor;
       s <= static_cast<long double>(hi.value()); s *= spec.step_factor) {
    const uint64_t bytes = static_cast<uint64_t>(s) / e * e;
    if (bytes <= sizes.back())
      return usage_error("-f/--stepfactor " + std::to_string(spec.step_factor) + " does not advance the size by a whole " +
                         element_text(e) + " after " + format_size(sizes.back()) + " bytes: raise -f or -b");
    sizes.push_back(bytes);
  }
  return sizes;
}

}  // namespace omnib
