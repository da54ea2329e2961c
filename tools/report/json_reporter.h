// The JSON document (docs/json-schema.md). The whole document is rewritten
// atomically after every configuration and at every checkpoint of a
// --duration run, so a crash (even kill -9) loses at most the calls since
// the last write, and the file is always valid JSON with complete records.
// A stream (-J /dev/stdout, a FIFO, a device) cannot be rewritten: it gets
// the document once, from finish().
#pragma once

#include <optional>
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
  Status checkpoint(const std::vector<ResultRecord>& in_progress) override;
  void set_resources(const ResourcesReport& resources) override;
  Status finish() override;
  // The last write of a run that was stopped before its end (sweep's
  // SIGINT/SIGTERM): the records so far, "complete": false.
  Status finish_interrupted();

 private:
  // Writes the context, the records so far, then `in_progress`; "complete"
  // is true only from finish(). A stream is written only by the last write.
  Status flush(const std::vector<ResultRecord>& in_progress = {}, bool complete = false, bool last = false);
  std::string path_;
  bool stream_ = false;
  nlohmann::json context_;
  nlohmann::json results_;
  std::optional<nlohmann::json> resources_;
};

}  // namespace omnib
