#include "tools/report/profile_reporter.h"

namespace omnib {

Status ProfileReporter::add_group(const std::vector<ResultRecord>& group) {
  for (auto& row : profile_rows(group)) rows_.push_back(std::move(row));
  return Status::ok();
}

Status ProfileReporter::finish() {
  if (!rows_.empty()) print_profile_block(out_, rows_);
  return Status::ok();
}

}  // namespace omnib
