// nccl-tests-style table on a stream: one row per size and algorithm, with the
// sparse columns (densities, wire bytes, analytic bytes) added, and each
// row's speedup over the fastest dense algorithm of its size (`vs dense`).
// A footer line gives each algorithm's link set-up time; the summary line
// gives the headline: the first sparse algorithm of the
// run (omni by default) against the best dense algorithm, size by size.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/report/reporter.h"

namespace omnib {

// What a rank whose table can no longer be written tells the others (through
// the rendezvous store): they end quietly too, with exit 141.
inline constexpr const char* kOutputClosedNotice = "its standard output was closed";

class TableReporter final : public Reporter {
 public:
  explicit TableReporter(std::FILE* out) : out_(out) {}
  Status begin(const RunContext& context) override;
  Status add_group(const std::vector<ResultRecord>& group) override;
  // One comment line per algorithm of the configuration in progress: calls
  // so far and the median, so that a long soak shows it is alive.
  Status checkpoint(const std::vector<ResultRecord>& in_progress) override;
  // The footer's "# resources:" line (resources_footer()).
  void set_resources(const ResourcesReport& resources) override { resources_ = resources; }
  Status finish() override;

 private:
  std::FILE* out_;
  int rows_ = 0;
  int wrong_rows_ = 0;
  int unchecked_rows_ = 0;
  double busbw_sum_ = 0;
  bool show_link_ = false;  // the link/rank column, under --net emulate
  std::optional<ResourcesReport> resources_;

  // The headline of one configuration: the subject against the best dense.
  struct Headline {
    uint64_t size_bytes = 0;
    std::optional<BestDense> vs;  // absent: no dense algorithm ran
  };
  // Each algorithm's set-up time (the same in every configuration of a run).
  std::vector<std::pair<std::string, double>> setup_us_;
  void print_setup();
  // The worst CPU wait share of any row so far, and the row's name.
  std::optional<std::pair<std::string, double>> max_wait_;
  void note_cpu_wait(const ResultRecord& r);
  void print_cpu_wait();

  std::string subject_;  // the first sparse algorithm that ran
  std::vector<Headline> headlines_;
  void add_headline(const std::vector<ResultRecord>& group);
  void print_headline();
};

}  // namespace omnib
