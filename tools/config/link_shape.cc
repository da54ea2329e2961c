#include "tools/config/link_shape.h"

#include <cmath>
#include <cstdio>
#include <iterator>

#include "tools/common/number_unit.h"

namespace omnib {
namespace {

constexpr double kMinRate = 1e6;   // 1 mbit/s: slower links make every run a timeout
constexpr double kMaxRate = 1e12;  // 1 tbit/s: far beyond what veth pairs carry
constexpr double kMaxDelayNs = 10e9;

}  // namespace

Result<uint64_t> parse_link_rate(const std::string& text) {
  static const UnitScale units[] = {
      {"bit", 1},          {"kbit", 1e3},         {"mbit", 1e6},          {"gbit", 1e9},
      {"tbit", 1e12},      {"kibit", 1024.0},     {"mibit", 1048576.0},   {"gibit", 1073741824.0},
      {"tibit", 1099511627776.0},
      {"bps", 8},          {"kbps", 8e3},         {"mbps", 8e6},          {"gbps", 8e9},
      {"tbps", 8e12},
  };
  const std::string how =
      ": write a number and a unit as tc does, e.g. 100mbit, 1gbit, 2.5gbit (bit, kbit, mbit, gbit, tbit; "
      "kbps, mbps, gbps are bytes per second)";
  const auto split = split_number_unit(text);
  if (!split) return usage_error("--link-rate '" + text + "' is not a rate" + how);
  const auto& [number, unit] = *split;
  if (unit.empty()) return usage_error("--link-rate '" + text + "' has no unit" + how);
  const UnitScale* u = find_unit(unit, units, std::size(units));
  if (!u) return usage_error("--link-rate '" + text + "': unknown unit '" + unit + "'" + how);
  const double bps = number * u->scale;
  if (!(bps >= kMinRate && bps <= kMaxRate))
    return usage_error("--link-rate '" + text + "' is out of range: use between 1mbit and 1tbit");
  return static_cast<uint64_t>(std::llround(bps));
}

Result<std::chrono::nanoseconds> parse_link_delay(const std::string& text) {
  static const UnitScale units[] = {
      {"s", 1e9},   {"sec", 1e9},  {"ms", 1e6},  {"msec", 1e6},
      {"us", 1e3},  {"usec", 1e3}, {"ns", 1},    {"nsec", 1},
  };
  const std::string how = ": write a number and a unit, e.g. 0, 5us, 50us, 1ms (s, ms, us, ns)";
  const auto split = split_number_unit(text);
  if (!split) return usage_error("--link-delay '" + text + "' is not a duration" + how);
  const auto& [number, unit] = *split;
  if (unit.empty()) {
    if (number == 0) return std::chrono::nanoseconds(0);
    return usage_error("--link-delay '" + text + "' has no unit" + how);
  }
  const UnitScale* u = find_unit(unit, units, std::size(units));
  if (!u) return usage_error("--link-delay '" + text + "': unknown unit '" + unit + "'" + how);
  const double ns = number * u->scale;
  if (ns > kMaxDelayNs) return usage_error("--link-delay '" + text + "' is out of range: use at most 10s");
  return std::chrono::nanoseconds(std::llround(ns));
}

std::string format_link_rate(uint64_t rate_bps) {
  static const UnitScale units[] = {{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}};
  char buf[48];
  for (const auto& u : units) {
    if (static_cast<double>(rate_bps) >= u.scale) {
      std::snprintf(buf, sizeof(buf), "%.6g%s", static_cast<double>(rate_bps) / u.scale, u.name);
      return buf;
    }
  }
  return std::to_string(rate_bps) + "bit";
}

std::string format_link_delay(std::chrono::nanoseconds delay) {
  const double ns = static_cast<double>(delay.count());
  if (ns == 0) return "0";
  char buf[48];
  if (ns >= 1e6)
    std::snprintf(buf, sizeof(buf), "%.6gms", ns / 1e6);
  else if (ns >= 1e3)
    std::snprintf(buf, sizeof(buf), "%.6gus", ns / 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%.6gns", ns);
  return buf;
}

}  // namespace omnib
