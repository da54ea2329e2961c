// A record's bound (docs/profiling.md, "The memory floor"): the least time
// its calls could take on these hosts and links, the larger of the link
// limit (--net emulate) and the memory floor; without a link limit, the
// floor. `of_bound` is the bound over the median time, as `of_limit` is the
// limit over it: 1 means the calls took no longer than their bound.
#pragma once

#include <string>
#include <vector>

#include "tools/record/result_record.h"

namespace omnib {

// Sets r.memory_floor and r.of_bound; a skipped record, or one without a
// median time, gets neither.
void set_memory_bound(const MemoryFloor& floor, ResultRecord& r);

// A floor that some call of the configuration beat is not one: its passes
// met something the calls did not, or it is wrong. Then what to tell the
// user (the floor, the fastest call and its algorithm); else "".
std::string beaten_floor(const MemoryFloor& floor, const std::vector<ResultRecord>& group);

}  // namespace omnib
