// What a process holds, read from /proc: resident memory now and at its
// peak, threads, open descriptors; and one process's holdings over the
// measured part of a size (a sample at its first timed call, one after each
// of a bounded set of timed rounds, and the latest), as ranks send them to
// rank 0 through the rendezvous store.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/status.h"

namespace omnib {

struct ResourceSample {
  uint64_t rss_bytes = 0;       // VmRSS
  uint64_t peak_rss_bytes = 0;  // VmHWM: the most the process ever held resident
  uint64_t threads = 0;         // Threads
  uint64_t fds = 0;             // entries of /proc/<pid>/fd, the listing's own descriptor not counted
};

// Reads process `pid` (0: this process). Blocks on /proc only (tens of
// microseconds). kUnavailable when /proc cannot be read: not Linux, a process
// of another user, or one that is gone.
Result<ResourceSample> read_resources(pid_t pid = 0);

// The roles a process of a run plays (docs/json-schema.md, "resources").
inline constexpr const char* kLauncherRole = "launcher";  // serves the store (the local launcher)
inline constexpr const char* kWorkerRole = "worker";
inline constexpr const char* kAggregatorRole = "aggregator";

// The holdings after one timed round (one call of each algorithm).
struct ResourcePoint {
  uint64_t round = 0;  // 0-based among the size's timed rounds
  uint64_t rss_bytes = 0;
  uint64_t threads = 0;
  uint64_t fds = 0;
};

struct ProcessResources {
  std::string role;  // one of the roles above
  int rank = -1;     // -1: the launcher
  ResourceSample start, end;
  uint64_t calls = 0;   // timed collective calls the process's rank made between start and end
  double seconds = 0;   // between start and end
  uint64_t rounds = 0;  // timed rounds between start and end: calls of each algorithm
  // After some of those rounds (resource_series.h), rounds strictly increasing.
  std::vector<ResourcePoint> series;
};

nlohmann::json to_json(const ProcessResources& p);
// Checks every field's type, the role, that `seconds` is not negative, and
// that the series' rounds increase and stay below `rounds`.
Result<ProcessResources> process_resources_from_json(const nlohmann::json& j);

// Watches one process: start() takes the start sample; report() a fresh end
// sample. Not thread-safe: one thread calls it.
class ResourceWatch {
 public:
  ResourceWatch(std::string role, int rank, pid_t pid = 0) : role_(std::move(role)), rank_(rank), pid_(pid) {}
  // Takes the start sample (again, if called again).
  Status start();
  bool started() const { return start_.has_value(); }
  // Forgets the start sample: the next start() or report() takes a new one.
  void reset() { start_.reset(); }
  // The process's holdings now, start sample untouched.
  Result<ResourceSample> sample() const { return read_resources(pid_); }
  // The start sample (taken now if start() was not called) and a fresh one;
  // `calls`: collective calls since start().
  Result<ProcessResources> report(uint64_t calls);

 private:
  std::string role_;
  int rank_;
  pid_t pid_;
  std::optional<ResourceSample> start_;
  std::chrono::steady_clock::time_point started_at_;
};

}  // namespace omnib
