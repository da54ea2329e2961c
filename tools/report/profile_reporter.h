// Prints the --profile block (tools/report/profile_block.h) once every
// configuration is measured, under the table.
#pragma once

#include <cstdio>
#include <vector>

#include "tools/report/profile_block.h"
#include "tools/report/reporter.h"

namespace omnib {

class ProfileReporter final : public Reporter {
 public:
  explicit ProfileReporter(std::FILE* out) : out_(out) {}
  Status begin(const RunContext&) override { return Status::ok(); }
  Status add_group(const std::vector<ResultRecord>& group) override;
  Status finish() override;

 private:
  std::FILE* out_;
  std::vector<ProfileRow> rows_;
};

}  // namespace omnib
