// Loading a result JSON document (docs/json-schema.md) for comparison.
#pragma once

#include <string>
#include <vector>

#include "engine/status.h"
#include "tools/report/result_record.h"

namespace omnib {

struct ResultFile {
  std::string path;
  int schema_version = 0;
  std::string command_line;
  std::string git_revision;  // from the environment block, "" if absent
  std::string timestamp;
  std::vector<ResultRecord> records;  // in file order
};

// Usage error (exit 2) when the file is missing, unreadable, not JSON, or not
// an omni-bench result document; the message names the file and the fix.
Result<ResultFile> load_result_file(const std::string& path);

}  // namespace omnib
