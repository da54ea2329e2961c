// The table at the end of a sweep: one row per point (configuration), its
// fastest dense and fastest sparse algorithm, and omni (the run's first
// sparse algorithm) against each: above 1, omni is the faster.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tools/record/result_record.h"

namespace omnib {

class SweepSummary {
 public:
  // Every record of one finished point (one or more configurations).
  void add(const std::vector<ResultRecord>& records);
  void print(std::FILE* out) const;

 private:
  struct Row {
    std::string configuration;
    std::string best_dense, best_sparse, subject;  // algorithm names ("" when none ran)
    double dense_us = 0, sparse_us = 0, subject_us = 0;
  };
  std::vector<Row> rows_;
};

}  // namespace omnib
