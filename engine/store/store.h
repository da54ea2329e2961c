// The rendezvous seam: a store every rank of a job can reach, used to
// exchange addresses, barrier, gather small per-rank results, and tell every
// rank at once that the job failed. Implementation: tcp_store_client.h.
//
// Who calls what:
// - The harness: everything. Collectives: set/get under their own key prefix
//   (Gloo's and NCCL's rendezvous), never barrier or gather.
// - Every rank of a job calls barrier(name) and gather(name) once per name,
//   with the same world; names may be reused once the call has returned
//   everywhere (finished barriers and gathers leave nothing behind).
// Blocking and deadlines: every call blocks until it completes, the job
// fails, or the store's timeout (fixed when the store is made, -T) passes,
// counted from the start of the call however the bytes trickle in.
// Failures: kTimeout when the timeout passes; kUnavailable naming the rank
// and its message once any rank posted a failure (post_abort), or when the
// store cannot be reached; kUsage when a request breaks a documented limit.
// Threads: calls from several threads are serialized; post_abort may be called
// at any time from any thread, also while another call is waiting.
// Values are what ranks of the job wrote: the harness validates what it reads.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/status.h"

namespace omnib {

enum class GatherTo { kRoot, kEveryone };

class Store {
 public:
  virtual ~Store() = default;
  // Writes `key` (overwriting any earlier value).
  virtual Status set(const std::string& key, const std::string& value) = 0;
  // Waits until `key` exists and returns its value.
  virtual Result<std::string> get(const std::string& key) = 0;
  // Returns once `world` callers entered the barrier `name`.
  virtual Status barrier(const std::string& name, int world) = 0;
  // Every rank contributes `mine`. kEveryone: every rank gets all parts in
  // rank order. kRoot: rank 0 gets them; the others get an empty vector at
  // once (they do not wait for each other).
  virtual Result<std::vector<std::string>> gather(const std::string& name, int rank, int world,
                                                  const std::string& mine, GatherTo to) = 0;
  // Tells every rank the job failed: their waits in progress and later calls
  // fail with "rank <rank> failed: <message>". The first failure posted wins.
  virtual Status post_abort(int rank, const std::string& message) = 0;
  // The longest any call waits.
  virtual std::chrono::milliseconds timeout() const = 0;
};

// Shorthands for the calls above.
Status store_barrier(Store& store, const std::string& name, int world);
Result<std::vector<std::string>> store_all_gather(Store& store, const std::string& name, int rank, int world,
                                                  const std::string& mine);
Result<std::vector<std::string>> store_gather_to_root(Store& store, const std::string& name, int rank, int world,
                                                      const std::string& mine);

// Every rank calls it with the same arguments: `rounds` barriers named
// `name`/<i>; returns this rank's median barrier time in microseconds.
Result<double> measure_barrier_latency_us(Store& store, const std::string& name, int world, int rounds = 5);

}  // namespace omnib
