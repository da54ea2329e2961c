#include "engine/omni/direct_lanes.h"

#include <string>

namespace omnib {

Result<int> direct_route_lanes(const char* forced, int local_workers, int cores) {
  if (forced != nullptr && *forced != '\0') {
    const std::string value(forced);
    if (value == "1") return 1;
    if (value == "2") return 2;
    return usage_error(std::string(kDirectLanesVar) + "=" + value +
                       " is not a lane count: set it to 1 or 2, or unset it to choose from the cores");
  }
  return 2 * static_cast<int64_t>(local_workers) > cores ? 1 : 2;
}

}  // namespace omnib
