// Plain result records: what the runner measured for one algorithm on one
// configuration. Reporters render them; nothing here prints.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/stats.h"

namespace omnib {

constexpr int kSchemaVersion = 1;

// The measured sparsity of one configuration's inputs.
struct InputStats {
  double element_density = 0;      // largest over ranks
  double block_density = 0;        // largest over ranks
  double mean_block_density = 0;   // mean over ranks
  double union_block_density = 0;  // blocks non-zero on at least one rank
  double union_element_density = 0;
};

struct ResultRecord {
  // Configuration.
  std::string collective = "allreduce";
  std::string algo;
  uint64_t size_bytes = 0;
  uint64_t count = 0;
  std::string dtype;
  double density = 0;  // asked for
  uint64_t block_size = 0;
  int nodes = 0;
  int aggregators = 0;
  std::string overlap;
  std::string workload;
  std::string device;
  bool inplace = false;
  uint64_t seed = 0;

  // Outcome.
  bool skipped = false;
  std::string skip_reason;
  int iters = 0;
  TimeStats time_us;
  std::vector<double> samples_us;  // per-iteration times (max over ranks), in run order
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<double> wire_sent_per_rank_max;  // bytes per iteration
  std::optional<double> wire_sent_total;
  std::string wire_note;  // why wire bytes are missing, if they are
  // Bytes the emulated links transmitted per iteration (--net emulate only).
  std::optional<double> link_sent_per_rank_max;
  std::optional<double> link_sent_total;
  double analytic_sent_per_rank_max = 0;
  double analytic_sent_total = 0;
  InputStats inputs;
  bool checked = false;
  uint64_t wrong_elements = 0;
  bool correct = false;
  std::map<std::string, double> speedup_vs;  // other algo -> its time / this time
  std::string note;

  // The parameters that identify a configuration (everything but algo).
  nlohmann::json config_key() const;
};

nlohmann::json to_json(const ResultRecord& r);
ResultRecord record_from_json(const nlohmann::json& j);

// Fills speedup_vs of each record from the others' median times.
void compute_speedups(std::vector<ResultRecord>& group);

// Written once per run: how and where it ran.
struct RunContext {
  std::string command_line;
  nlohmann::json configuration;  // options as given
  nlohmann::json environment;    // versions, hosts, ranks, git revision
};

}  // namespace omnib
