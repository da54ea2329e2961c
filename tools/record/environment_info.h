// The environment block of a report: versions, build, host.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace omnib {

// Facts about this process's build and host (no rank-specific data).
nlohmann::json build_environment();
std::string host_name();
std::string utc_timestamp();

}  // namespace omnib
