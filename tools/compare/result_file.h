// Loading result documents (docs/json-schema.md) for comparison: one side of
// a comparison may be several files (repeated runs), whose records of one
// configuration and algorithm are then repetitions.
#pragma once

#include <cstdint>
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
  // Schema 1 files lack newer fields: those took their defaults (named here).
  std::vector<std::string> defaulted;
};

// The largest result file load_result_file reads (its parsed form takes
// several times as much memory).
inline constexpr uint64_t kMaxResultFileBytes = uint64_t{256} << 20;

// Usage error (exit 2) when the file is missing, unreadable, not a regular
// file (a FIFO or device is never read: nothing waits or reads without end),
// larger than kMaxResultFileBytes, not JSON (or nested deeper than
// kMaxJsonDepth), not an omni-bench result document, of a schema this build
// cannot read, has a field of the wrong type (the message names it), or
// holds a record that ran with zero or negative times.
Result<ResultFile> load_result_file(const std::string& path);

// Parses a document already in memory (what load_result_file does after
// reading); `path` names it in messages. The fuzz target of the loader.
Result<ResultFile> parse_result_document(const std::string& text, const std::string& path);

// One side of a comparison: the files of a comma list, in order.
struct ResultSide {
  std::vector<ResultFile> files;
  std::string describe() const;  // "a.json" or "a.json (+2 more)"
};
Result<ResultSide> load_result_side(const std::string& comma_list);

}  // namespace omnib
