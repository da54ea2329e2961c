#include "tools/common/time_span.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <vector>

#include "tools/common/number_unit.h"

namespace omnib {

namespace {

// "1h30m" -> "1h", "30m": a new piece starts where a digit follows a unit.
std::vector<std::string> pieces_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool number = std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.';
    const bool after_unit = i > 0 && !std::isdigit(static_cast<unsigned char>(text[i - 1])) && text[i - 1] != '.';
    if (out.empty() || (number && after_unit)) out.emplace_back();
    out.back() += text[i];
  }
  return out;
}

}  // namespace

Result<std::chrono::milliseconds> parse_time_span(const std::string& flag, const std::string& text,
                                                  std::chrono::milliseconds min, std::chrono::milliseconds max) {
  static const UnitScale units[] = {
      {"ms", 1},        {"msec", 1},        {"s", 1e3},     {"sec", 1e3}, {"m", 60e3},
      {"min", 60e3},    {"h", 3600e3},      {"hour", 3600e3},
  };
  const std::string how = ": write a number and a unit, e.g. 30s, 10m, 2h, 1h30m (ms, s, m, h)";
  const auto pieces = pieces_of(text);
  if (pieces.empty()) return usage_error(flag + " '" + text + "' is not a length of time" + how);
  double ms = 0;
  for (const std::string& piece : pieces) {
    const auto split = split_number_unit(piece);
    if (!split) return usage_error(flag + " '" + text + "' is not a length of time" + how);
    if (split->unit.empty()) return usage_error(flag + " '" + text + "' has no unit" + how);
    const UnitScale* u = find_unit(split->unit, units, std::size(units));
    if (!u) return usage_error(flag + " '" + text + "': unknown unit '" + split->unit + "'" + how);
    ms += split->number * u->scale;
  }
  if (!(ms >= static_cast<double>(min.count()) && ms <= static_cast<double>(max.count())))
    return usage_error(flag + " '" + text + "' is out of range: use between " + format_time_span(min) + " and " +
                       format_time_span(max));
  return std::chrono::milliseconds(std::llround(ms));
}

std::string format_time_span(std::chrono::milliseconds span) {
  int64_t ms = span.count();
  if (ms == 0) return "0s";
  std::string out;
  for (auto [unit, size] : {std::pair{"h", int64_t{3600000}}, {"m", int64_t{60000}}}) {
    if (ms < size) continue;
    out += std::to_string(ms / size) + unit;
    ms %= size;
  }
  if (ms == 0) return out;
  if (out.empty() && ms < 1000) return std::to_string(ms) + "ms";
  char buf[32];
  std::snprintf(buf, sizeof buf, ms % 1000 == 0 ? "%.0fs" : "%gs", static_cast<double>(ms) / 1e3);
  return out + buf;
}

}  // namespace omnib
