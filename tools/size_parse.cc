#include "tools/size_parse.h"

#include <cctype>
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

}  // namespace omnib

namespace omnib {

std::string human_bytes(double bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (i < 4 && bytes >= 1024) {
    bytes /= 1024;
    ++i;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", bytes, unit[i]);
  return buf;
}

}  // namespace omnib
