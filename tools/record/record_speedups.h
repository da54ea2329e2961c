// The ratios between the records of one configuration: each record's
// speedup over every other, and over the fastest dense algorithm of the run.
#pragma once

#include <vector>

#include "tools/record/result_record.h"

namespace omnib {

// Fills speedup_vs of each record from the others' median times, and
// vs_best_dense from the fastest dense record of the group (ties: the first).
void compute_speedups(std::vector<ResultRecord>& group);

// The fastest dense record of a group that ran, or null.
const ResultRecord* fastest_dense(const std::vector<ResultRecord>& group);

}  // namespace omnib
