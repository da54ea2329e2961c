#include "tools/config/option_values.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace omnib {
namespace {

bool type_is(const CLI::Option& opt, const std::string& type) {
  const std::string name = opt.get_type_name();
  return name == type || name.rfind(type + ":", 0) == 0;
}

std::string option_name(const CLI::Option& opt) {
  return opt.get_positional() ? opt.get_name(true) : opt.get_name();
}

// Why `value` of an option typed `opt` means nothing, or "".
std::string problem_with(const CLI::Option& opt, const std::string& value) {
  if (value.empty()) return "is empty: give a value, or leave the option out";
  errno = 0;
  char* end = nullptr;
  if (type_is(opt, "FLOAT")) {
    const double v = std::strtod(value.c_str(), &end);
    if (!std::isfinite(v)) return "is not a finite number";
  } else if (type_is(opt, "UINT")) {
    if (value.find('-') != std::string::npos) return "is negative: give a number of 0 or more";
    (void)std::strtoull(value.c_str(), &end, 0);
    if (errno == ERANGE) return "is out of range (at most 18446744073709551615)";
  } else if (type_is(opt, "INT")) {
    (void)std::strtoll(value.c_str(), &end, 0);
    if (errno == ERANGE) return "is out of range";
  }
  return "";
}

}  // namespace

Status check_option_values(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_type_size_min() == 0) continue;  // not given, or a flag
    for (const std::string& value : opt->results()) {
      const std::string problem = problem_with(*opt, value);
      if (!problem.empty()) return usage_error(option_name(*opt) + " '" + value + "' " + problem);
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) OMNIB_RETURN_IF_ERROR(check_option_values(*sub));
  return Status::ok();
}

}  // namespace omnib
