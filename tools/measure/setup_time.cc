#include "tools/measure/setup_time.h"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/config/json_fields.h"
#include "tools/measure/peer_bounds.h"

namespace omnib {

Result<std::vector<double>> max_setup_us_over_ranks(Store& store, int rank, int world,
                                                    const std::vector<double>& mine,
                                                    std::chrono::steady_clock::time_point run_started) {
  auto all = store_gather_to_root(store, "setup", rank, world, nlohmann::json(mine).dump());
  if (!all.is_ok()) return all.status();
  if (rank != 0) return std::vector<double>{};
  std::vector<double> max(mine.size(), 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_started).count();
  const double max_us = PeerBounds::for_run(seconds, 0).max_us();
  // What other ranks sent is input from outside this process: checked.
  for (size_t r = 0; r < all.value().size(); ++r) {
    const auto j = parse_untrusted_json(all.value()[r]);
    if (!j.is_array() || j.size() != mine.size() ||
        !std::all_of(j.begin(), j.end(), [](const nlohmann::json& v) { return v.is_number(); }))
      return internal_error("rendezvous value 'gather/setup/" + std::to_string(r) + "' is not a list of " +
                            std::to_string(mine.size()) + " set-up times (ranks built from different sources?)");
    // NaN fails both comparisons.
    if (!std::all_of(j.begin(), j.end(), [&](const nlohmann::json& v) {
          const double us = v.get<double>();
          return us >= 0 && us <= max_us;
        }))
      return internal_error("rank " + std::to_string(r) + " sent set-up times (rendezvous value 'gather/setup/" +
                            std::to_string(r) + "') outside [0, " + std::to_string(max_us) +
                            "] us, longer than the run has lasted: is every rank the same omni-bench build, and is "
                            "the job token known to this job alone?");
    for (size_t a = 0; a < mine.size(); ++a) max[a] = std::max(max[a], j[a].get<double>());
  }
  return max;
}

}  // namespace omnib
