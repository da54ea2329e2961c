// nccl-tests-style table on a stream: one row per size and algorithm, with the
// sparse columns (densities, wire bytes, analytic bytes) added.
#pragma once

#include <cstdio>

#include "tools/report/reporter.h"

namespace omnib {

// What a rank whose table can no longer be written tells the others (through
// the rendezvous store): they end quietly too, with exit 141.
inline constexpr const char* kOutputClosedNotice = "its standard output was closed";

class TableReporter final : public Reporter {
 public:
  explicit TableReporter(std::FILE* out) : out_(out) {}
  Status begin(const RunContext& context) override;
  Status add_group(const std::vector<ResultRecord>& group) override;
  Status finish() override;

 private:
  std::FILE* out_;
  int rows_ = 0;
  int wrong_rows_ = 0;
  int unchecked_rows_ = 0;
  double busbw_sum_ = 0;
  bool show_link_ = false;  // the link/rank column, under --net emulate
};

}  // namespace omnib
