// Checks of a trace written by --trace, shared by the end-to-end tests and
// shown to fail on broken traces by trace_checks_test.cc. Each returns the
// problems it found, one line each naming rank, call and span; empty: none.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/trace/chrome_trace.h"

namespace omnib::testing {

// Every rank's spans are ordered and nest: on each lane, two spans are
// disjoint or one holds the other; every lane span of a call lies inside the
// rank's call span, whose barrier ends before it begins; calls follow one
// another without overlap.
std::vector<std::string> check_nesting(const TraceDocument& doc);

// For every traced call, the longest call span over the worker ranks is the
// measured time of that call (results[..].samples_us[iteration] of the -J
// file) within `tolerance` (0.05: 5%).
std::vector<std::string> check_call_times(const TraceDocument& doc, const nlohmann::json& results, double tolerance);

// For every traced call, the critical path covers the call: its last step
// is the last span to end on the worker whose call ended last; every step
// begins before the step after it ends; its first step has nothing before it
// on its rank (the walk reached the start of the call); and its spans explain
// at least `min_coverage` of the call. A loaded machine can stall a lane for
// milliseconds, time no span explains, so up to `may_stall` of an algorithm's
// calls (a fraction, rounded down) may fall short of the coverage; an
// algorithm in `host_bound` (its run says the host, not the engine, set its
// time: a rank waited for a CPU past kHostBoundWaitShare) is not held to the
// coverage at all. For every algorithm whose ranks exchange frames, some
// call's path crosses ranks (it follows a receive to the send it waited for).
std::vector<std::string> check_critical_paths(const TraceDocument& doc, double min_coverage, double may_stall,
                                              const std::set<std::string>& host_bound = {});

// For every traced call and link direction (sender, receiver, shard), the
// bytes of the send spans equal those of the receive spans: the in-flight
// counters return to zero.
std::vector<std::string> check_bytes_balance(const TraceDocument& doc);

}  // namespace omnib::testing
