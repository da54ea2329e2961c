#include "tools/schedule/schedule_catalog.h"

#include <map>

#include "tools/schedule/dense_schedules.h"
#include "tools/schedule/omni_schedule.h"
#include "tools/schedule/sparse_schedules.h"

namespace omnib {
namespace {

const std::map<std::string, ScheduleBuilder>& catalog() {
  static const std::map<std::string, ScheduleBuilder> builders = {
      {"omni", [](const ScheduleInputs& in) { return omni_schedule(in, false); }},
      {"ps", [](const ScheduleInputs& in) { return omni_schedule(in, true); }},
      {"ring", ring_schedule},
      {"tree", tree_schedule},
      {"allgather", allgather_schedule},
      {"sparcml-split", sparcml_split_schedule},
      {"oktopk", oktopk_schedule},
  };
  return builders;
}

}  // namespace

const ScheduleBuilder* find_schedule(const std::string& algo) {
  const auto it = catalog().find(algo);
  return it == catalog().end() ? nullptr : &it->second;
}

std::vector<std::string> scheduled_algorithms() {
  std::vector<std::string> names;
  for (const auto& [name, builder] : catalog()) names.push_back(name);
  return names;
}

}  // namespace omnib
