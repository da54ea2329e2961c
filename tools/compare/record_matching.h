// Pairs the configurations of a baseline and a current result file by their
// parameters (ResultRecord::config_key), never by position or algorithm list.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/status.h"
#include "tools/compare/result_file.h"

namespace omnib {

// Records of one configuration in one file. Several records of one algorithm
// are repetitions (e.g. files of repeated runs merged), kept in file order.
struct ConfigRecords {
  std::map<std::string, std::vector<ResultRecord>> by_algo;
};

struct MatchedConfig {
  nlohmann::json key;  // config_key()
  std::string label;   // short human description of the key
  uint64_t size_bytes = 0;
  ConfigRecords baseline;
  ConfigRecords current;
};

struct Matching {
  std::vector<MatchedConfig> common;  // in the current file's order
  std::vector<std::string> only_in_baseline;  // labels
  std::vector<std::string> only_in_current;
  size_t below_min_size = 0;  // common configurations left out by min_size
};

// Usage error when the files share no configuration of at least `min_size`
// bytes; the message says which parameters differ and their values in each file.
Result<Matching> match_configurations(const ResultFile& baseline, const ResultFile& current, uint64_t min_size);

// "4M float density 0.01 block 256 nodes 4 ..." for tables and messages.
std::string config_label(const ResultRecord& r);

}  // namespace omnib
