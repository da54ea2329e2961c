// The reporter seam: renders result records. The runner hands each finished
// configuration (all its algorithms) to every reporter as it completes.
#pragma once

#include <vector>

#include "engine/status.h"
#include "tools/report/result_record.h"

namespace omnib {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual Status begin(const RunContext& context) = 0;
  virtual Status add_group(const std::vector<ResultRecord>& group) = 0;
  virtual Status finish() = 0;
};

}  // namespace omnib
