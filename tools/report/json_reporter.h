// The JSON document (docs/json-schema.md). The whole document is rewritten
// atomically after every configuration, so a crash loses at most the
// configuration in progress and the file is always valid JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/report/reporter.h"

namespace omnib {

class JsonReporter final : public Reporter {
 public:
  // `existing` holds records to keep (e.g. a resumed sweep's).
  explicit JsonReporter(std::string path, const std::vector<ResultRecord>& existing = {});
  Status begin(const RunContext& context) override;
  Status add_group(const std::vector<ResultRecord>& group) override;
  Status finish() override;

 private:
  Status flush();
  std::string path_;
  nlohmann::json context_;
  nlohmann::json results_;
};

}  // namespace omnib
