// Pairs the configurations of a baseline and a current side by their
// identity (RunConfig::key), never by position or algorithm list.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/status.h"
#include "tools/compare/result_file.h"

namespace omnib {

// Records of one configuration on one side. Several records of one
// algorithm are repetitions (several files, or files of repeated runs
// merged), kept in file order: the k-th record of one algorithm ran beside
// the k-th record of another.
struct ConfigRecords {
  std::map<std::string, std::vector<ResultRecord>> by_algo;
};

struct MatchedConfig {
  nlohmann::json key;  // RunConfig::key()
  std::string label;   // RunConfig::label()
  uint64_t size_bytes = 0;
  ConfigRecords baseline;
  ConfigRecords current;
};

struct Matching {
  std::vector<MatchedConfig> common;          // in the current side's order
  std::vector<std::string> only_in_baseline;  // labels: the current run lacks them (a failure)
  std::vector<std::string> only_in_current;   // labels: new, not judged
  size_t below_min_size = 0;                  // common configurations left out by min_size
};

// Usage error when the sides share no configuration of at least `min_size`
// bytes; the message says which identity fields differ and their values.
Result<Matching> match_configurations(const ResultSide& baseline, const ResultSide& current, uint64_t min_size);

// For --paired: usage error unless every algorithm that ran on both sides of
// a configuration holds as many runs on one side as on the other (run i of
// each pairs with run i of the other). The message names the first that does not.
Status check_runs_pair_up(const Matching& matching);

}  // namespace omnib
