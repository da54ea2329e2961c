#include <algorithm>

#include "engine/collective/collective.h"

namespace omnib {

CollectiveRegistry& CollectiveRegistry::instance() {
  static CollectiveRegistry registry;
  return registry;
}

void CollectiveRegistry::add(CollectiveInfo info) { infos_.push_back(std::move(info)); }

Status CollectiveRegistry::replace(CollectiveInfo info) {
  for (auto& i : infos_)
    if (i.name == info.name) {
      i = std::move(info);
      return Status::ok();
    }
  return usage_error("no algorithm named '" + info.name + "' to replace");
}

const CollectiveInfo* CollectiveRegistry::find(const std::string& name) const {
  for (const auto& i : infos_)
    if (i.name == name) return &i;
  return nullptr;
}

std::vector<std::string> CollectiveRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& i : infos_) out.push_back(i.name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace omnib
