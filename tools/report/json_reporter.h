// The JSON document (docs/json-schema.md). The whole document is rewritten
// atomically after every configuration, so a crash loses at most the
// configuration in progress and the file is always valid JSON.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tools/report/reporter.h"

namespace omnib {

class JsonReporter final : public Reporter {
 public:
  // `existing` holds results to keep (e.g. a resumed sweep); null for none.
  explicit JsonReporter(std::string path, nlohmann::json existing_results = nlohmann::json::array())
      : path_(std::move(path)), results_(std::move(existing_results)) {}
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
