// The typed options of `omni-bench compare`, their CLI binding and checks.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "engine/status.h"

namespace omnib {

// What can be compared between two result files.
enum class Metric { kBytes, kFrames, kSpeedup, kTime, kCpu, kCorrect };

const char* metric_name(Metric m);

struct CompareOptions {
  std::string baseline_path;  // a file, or a comma list of files (repeated runs)
  std::string current_path;
  double tolerance = 0.10;        // speedups and times: relative change allowed
  double cpu_tolerance = 0.10;    // CPU per wire byte: the least relative change allowed
  double bytes_tolerance = 0;     // wire bytes and frames: exact for a given seed
  bool accept_improvements = false;  // fewer bytes or frames pass (as IMPROVED) instead of failing
  double alpha = 0.05;            // significance level of the test on per-run values (or pairs)
  bool absolute = false;          // also compare absolute times
  bool paired = false;            // run i of the baseline ran beside run i of the current side, on one host
  std::string subject = "omni";  // whose speedups over the others are checked
  std::string cpu_reference;     // CPU per byte judged as a ratio to this algorithm's; empty: absolute
  std::string metric_text;       // comma list; empty: all that apply
  std::string timing_of_text;    // comma list of algorithms whose time and CPU are judged; empty: all
  std::string min_size_text = "0";
  std::string json_path;
  bool force = false;

  // Derived by validate_compare_options().
  std::set<Metric> metrics;
  uint64_t min_size = 0;
  std::set<std::string> timing_of;  // empty: every algorithm

  // Whether `algo`'s time and CPU per byte are judged (--timing-of).
  bool judges_timing_of(const std::string& algo) const { return timing_of.empty() || timing_of.count(algo) > 0; }
};

// Declares every option on `cmd`.
void bind_compare_options(CLI::App& cmd, CompareOptions& o);
// Checks values and fills the derived fields. Usage errors say what to do.
Status validate_compare_options(CompareOptions& o);

}  // namespace omnib
