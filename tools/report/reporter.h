// The reporter seam: renders result records. The runner hands each finished
// configuration (all its algorithms) to every reporter as it completes.
#pragma once

#include <vector>

#include "engine/base/status.h"
#include "tools/measure/resources_report.h"
#include "tools/record/result_record.h"

namespace omnib {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual Status begin(const RunContext& context) = 0;
  virtual Status add_group(const std::vector<ResultRecord>& group) = 0;
  // --duration, every --checkpoint-interval: the records of the configuration
  // in progress as they stand (duration.complete false). They are not added:
  // the next checkpoint or add_group supersedes them.
  virtual Status checkpoint(const std::vector<ResultRecord>& in_progress) {
    (void)in_progress;
    return Status::ok();
  }
  // The run's resources so far; the runner calls it before add_group,
  // checkpoint and finish.
  virtual void set_resources(const ResourcesReport& resources) { (void)resources; }
  virtual Status finish() = 0;
};

}  // namespace omnib
