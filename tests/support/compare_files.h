// Result files crafted for the tests of `omni-bench compare`: records with
// chosen per-run times, written as result documents, and compare run on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cli_runner.h"
#include "tools/record/result_record.h"

namespace omnib::testing {

// One algorithm's record of a 4M, 4-node configuration at density 0.01,
// with one run per median in `run_medians` (CPU per wire byte follows each
// run's time).
ResultRecord make_record(const std::string& algo, std::vector<double> run_medians, double wire_bytes,
                         uint64_t size = 4u << 20, int nodes = 4);

// The same with kSteadyRuns runs around `median_us` (within 2%, in the same
// pattern for every algorithm, so that per-run speedups stay exact): enough
// runs a side for a test.
inline constexpr size_t kSteadyRuns = 5;
ResultRecord make_record(const std::string& algo, double median_us, double wire_bytes, uint64_t size = 4u << 20,
                         int nodes = 4);

// A result document holding the given configurations (speedups filled in).
nlohmann::json make_document(std::vector<std::vector<ResultRecord>> groups);

// Writes `doc` to a fresh temporary file named after `name`; returns its path.
std::string write_result(const std::string& name, const nlohmann::json& doc);

// omni at `omni_us` and ps at 1000 us, steady runs: speedup 10x at 100 us.
std::vector<ResultRecord> standard_group(double omni_us = 100, double omni_bytes = 84000);

// `omni-bench compare BASELINE CURRENT extra...` on two documents.
CliResult compare(const nlohmann::json& baseline, const nlohmann::json& current, std::vector<std::string> extra = {});

}  // namespace omnib::testing
