// The rendezvous seam: a key-value store every rank of a job can reach, used to
// exchange addresses, barrier, and gather small per-rank results. Keys are
// written once; `get` waits until a key exists.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/status.h"

namespace omnib {

class Store {
 public:
  virtual ~Store() = default;
  virtual Status set(const std::string& key, const std::string& value) = 0;
  // Waits until `key` exists or the store's timeout passes (kTimeout).
  virtual Result<std::string> get(const std::string& key) = 0;
  // Atomically adds `delta` to the integer at `key` (0 if absent); returns the sum.
  virtual Result<int64_t> add(const std::string& key, int64_t delta) = 0;
};

// Every rank calls barrier(name) once per name; returns when all `world` did.
Status store_barrier(Store& store, const std::string& name, int world);

// Every rank contributes `mine`; returns all contributions in rank order.
Result<std::vector<std::string>> store_all_gather(Store& store, const std::string& name, int rank, int world,
                                                  const std::string& mine);

// Every rank contributes `mine`; rank 0 gets all contributions in rank order,
// the others an empty vector (they do not wait for each other).
Result<std::vector<std::string>> store_gather_to_root(Store& store, const std::string& name, int rank, int world,
                                                      const std::string& mine);

}  // namespace omnib
