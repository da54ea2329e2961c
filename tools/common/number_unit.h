// Option values written as a number and a unit ("2.5gbit", "50us", "10m"):
// the one splitter and unit table lookup behind every such option
// (--link-rate, --link-delay, --duration, --checkpoint-interval).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace omnib {

struct NumberUnit {
  double number = 0;  // non-negative: digits with at most one '.'
  std::string unit;   // what follows the number, lower-cased ("" when none)
};

// nullopt when `text` does not start with a plain non-negative number.
std::optional<NumberUnit> split_number_unit(const std::string& text);

struct UnitScale {
  const char* name;  // lower case
  double scale;      // what one of the unit is worth in the option's base unit
};

// The entry of `units` (n of them) named `unit`, or null.
const UnitScale* find_unit(const std::string& unit, const UnitScale* units, size_t n);

}  // namespace omnib
