// The environment block of a report: versions, build, host.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace omnib {

// Facts about this process's build and host (no rank-specific data).
nlohmann::json build_environment();
std::string host_name();
// /proc/cpuinfo's first "model name" (x86) or "cpu model" (others), else
// "unknown": what tells one host's memory floor from another's
// (tools/measure/floor_cache.h).
std::string cpu_model();
std::string utc_timestamp();

}  // namespace omnib
