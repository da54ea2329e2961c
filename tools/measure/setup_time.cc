#include "tools/measure/setup_time.h"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

namespace omnib {

Result<std::vector<double>> max_setup_us_over_ranks(Store& store, int rank, int world,
                                                    const std::vector<double>& mine) {
  auto all = store_gather_to_root(store, "setup", rank, world, nlohmann::json(mine).dump());
  if (!all.is_ok()) return all.status();
  if (rank != 0) return std::vector<double>{};
  std::vector<double> max(mine.size(), 0);
  // What other ranks sent is input from outside this process: checked.
  for (size_t r = 0; r < all.value().size(); ++r) {
    const auto j = nlohmann::json::parse(all.value()[r], nullptr, false);
    if (!j.is_array() || j.size() != mine.size() ||
        !std::all_of(j.begin(), j.end(), [](const nlohmann::json& v) { return v.is_number(); }))
      return internal_error("rendezvous value 'gather/setup/" + std::to_string(r) + "' is not a list of " +
                            std::to_string(mine.size()) + " set-up times (ranks built from different sources?)");
    for (size_t a = 0; a < mine.size(); ++a) max[a] = std::max(max[a], j[a].get<double>());
  }
  return max;
}

}  // namespace omnib
