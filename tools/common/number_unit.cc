#include "tools/common/number_unit.h"

#include <cctype>
#include <cstdlib>

namespace omnib {

std::optional<NumberUnit> split_number_unit(const std::string& text) {
  size_t i = 0;
  int digits = 0, dots = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    if (text[i] == '.') ++dots; else ++digits;
    ++i;
  }
  if (digits == 0 || dots > 1) return std::nullopt;
  NumberUnit out;
  out.number = std::strtod(text.substr(0, i).c_str(), nullptr);
  for (; i < text.size(); ++i) out.unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  return out;
}

const UnitScale* find_unit(const std::string& unit, const UnitScale* units, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (unit == units[i].name) return &units[i];
  return nullptr;
}

}  // namespace omnib
