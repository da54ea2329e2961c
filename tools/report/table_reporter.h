// nccl-tests-style table on a stream: per configuration, a line with its
// size, type and densities and a row per algorithm (table_rows.h: narrow,
// at most 120 characters, or --wide), each row's time against the first
// algorithm's and, for sparse rows, the fastest dense algorithm's. Under the
// table, first the headline (the first sparse algorithm against the best
// dense, size by size), then checks, each dense algorithm's average busbw,
// link set-up times, the CPU wait and the resources.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/report/reporter.h"
#include "tools/report/table_rows.h"

namespace omnib {

// What a rank whose table can no longer be written tells the others (through
// the rendezvous store): they end quietly too, with exit 141.
inline constexpr const char* kOutputClosedNotice = "its standard output was closed";

class TableReporter final : public Reporter {
 public:
  // `wide`: every column in every row (--wide); else at most 120 characters.
  TableReporter(std::FILE* out, bool wide) : out_(out) { layout_.wide = wide; }
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
  TableLayout layout_;
  // Per dense algorithm, its rows' busbw: the footer's average.
  struct Busbw {
    std::string algo;
    double sum_GBps = 0;
    int rows = 0;
  };
  std::vector<Busbw> busbw_;
  void count_row(const ResultRecord& r);
  void print_busbw();
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
  std::vector<std::pair<std::string, double>> host_bound_;  // rows past kHostBoundWaitShare
  // Without schedstat: the row whose busiest rank was preempted most per call.
  std::optional<std::pair<std::string, double>> max_preemptions_;
  void note_cpu_wait(const ResultRecord& r);
  void print_cpu_wait();
  // Emulated rows whose TCP retransmitted, with the segments per call.
  std::vector<std::pair<std::string, double>> retransmitted_;
  bool link_counted_ = false;  // some row had its retransmissions counted
  void print_retransmits();

  std::string subject_;  // the first sparse algorithm that ran
  std::vector<Headline> headlines_;
  void add_headline(const std::vector<ResultRecord>& group);
  void print_headline();
};

}  // namespace omnib
