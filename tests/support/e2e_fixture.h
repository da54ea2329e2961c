// Shared pieces of the allreduce end-to-end tests: one short checked run of
// `omni-bench allreduce`, the per-row correctness checks, and the grid of
// node counts and densities every algorithm family is checked on. Each test
// file keeps only what is particular to its algorithms.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace omnib::testing {

// Runs `omni-bench allreduce -n 2 -w 1 -T 20 -J <temp file>` plus `args`
// (which name the algorithms), expects exit 0, and returns the JSON written;
// null when the run failed (the failure is already reported).
nlohmann::json run_allreduce_ok(const std::vector<std::string>& args, int limit_seconds = 120,
                                const std::vector<std::string>& env = {});

// The run has exactly `expected_rows` rows, none skipped, and every one was
// checked against the reference with no wrong element.
void expect_all_rows_correct(const nlohmann::json& doc, size_t expected_rows);

// Every row's wire model counted the inputs' non-zeros (analytic_bytes.exact)
// and equals the measured wire bytes to the byte, per rank max and total.
void expect_models_exact(const nlohmann::json& doc);

// Algorithms that run together as one --algo list and are checked as a set.
class AlgoFamily {
 public:
  AlgoFamily(std::vector<std::string> algos, int limit_seconds) : algos_(std::move(algos)), limit_(limit_seconds) {}

  const std::vector<std::string>& algos() const { return algos_; }
  // "a,b,c": the value of --algo.
  std::string list() const;
  // run_allreduce_ok with every algorithm of the family.
  nlohmann::json run_ok(std::vector<std::string> args) const;
  // Every algorithm ran, once per size, and every element matched.
  void expect_all_correct(const nlohmann::json& doc, size_t sizes) const;
  // run_ok, then expect_all_correct: for runs that check nothing else.
  void expect_correct(std::vector<std::string> args, size_t sizes) const;

 private:
  std::vector<std::string> algos_;
  int limit_;
};

// One point of the nodes x density grid.
struct Grid {
  int nodes;
  std::string density;
};

// 3, 4 and 5 ranks at densities 0, 0.01, 0.5 and 1: empty, sparse, half and
// dense inputs over node counts that divide the tensor differently.
std::vector<Grid> nodes_and_densities();

// The grid point at a tensor of 400012 bytes = 100003 elements, a prime, so
// that no split of it among ranks, blocks or chunks comes out even.
std::vector<std::string> uneven_count_args(const Grid& g);

// "nodes3_density0_01": a test name for a grid point.
std::string grid_name(const ::testing::TestParamInfo<Grid>& info);

// A named configuration and how many sizes (rows per algorithm) it runs.
struct Case {
  std::string name;
  std::vector<std::string> args;
  size_t sizes = 1;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info);

// Runs `c` with every algorithm of `family`: every row correct and every
// row's wire model exact (expect_models_exact).
void expect_models_exact(const AlgoFamily& family, const Case& c);

}  // namespace omnib::testing
