// What an algorithm needs in its rank process's environment, for backends
// that read their settings only from there (NCCL: NCCL_ALGO, NCCL_HOSTID).
// The harness writes it once, at the rank's start-up, while the process has
// one thread: setenv while another thread calls getenv is a data race in
// glibc, and once the ranks have met, the links', lanes' and NCCL's own
// threads are running.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace omnib {

// Where a rank process sits, as its launcher says before the ranks meet.
struct ProcessPlacement {
  int rank = 0;
  bool worker = true;  // false: a dedicated aggregator (never touches a GPU)
  // At most this many workers share this rank's host: every worker of the
  // job under omni-bench's own launcher, the tasks an external launcher put
  // on this host (aggregators included, hence "at most"); nullopt when the
  // launcher does not say.
  std::optional<int> host_workers_at_most;
  int visible_gpus = 0;  // CUDA devices this process sees (0: none, or not counted)
};

// One variable an algorithm asks for.
struct EnvSetting {
  std::string name;
  std::string value;
};

// One variable as start-up wrote it, and what it held before (nullopt:
// unset), so that a report can say what it replaced.
struct EnvChange {
  std::string name;
  std::string value;
  std::optional<std::string> previous;
};

inline const EnvChange* find_env_change(const std::vector<EnvChange>& changes, const std::string& name) {
  for (const EnvChange& c : changes)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace omnib
