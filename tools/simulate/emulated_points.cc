#include "tools/simulate/emulated_points.h"

#include "tools/common/comma_list.h"
#include "tools/compare/result_file.h"
#include "tools/schedule/schedule_catalog.h"

namespace omnib {

Result<std::vector<EmulatedPoint>> load_emulated_points(const std::string& files) {
  std::vector<EmulatedPoint> points;
  for (const std::string& path : split_list(files)) {
    auto file = load_result_file(path);
    if (!file.is_ok()) return file.status();
    for (const ResultRecord& r : file.value().records) {
      if (r.config.net != "emulate" || r.simulated || r.skipped || !r.finished()) continue;
      if (r.correct == false || find_schedule(r.algo) == nullptr) continue;
      EmulatedPoint p{r.algo, r.config, r.time_us.median, std::nullopt, r.link_retransmits_per_call,
                      r.link_sent_total};
      if (r.cpu) p.wait_share = r.cpu->wait_share_max();
      points.push_back(std::move(p));
    }
  }
  if (points.empty())
    return usage_error("'" + files +
                       "' holds no emulated measurement of an algorithm with a schedule: give results of "
                       "`omni-bench allreduce --net emulate` or `omni-bench sweep --link-rate ...`");
  return points;
}

}  // namespace omnib
