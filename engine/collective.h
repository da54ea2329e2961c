// The collective seam: the engine and every baseline implement Collective, and
// register a CollectiveInfo under a name. The harness only ever talks to these
// two types, never to a particular algorithm.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/block_layout.h"
#include "engine/encoding_policy.h"
#include "engine/route_policy.h"
#include "engine/input_support.h"
#include "engine/shard_map.h"
#include "engine/bootstrap/store.h"
#include "engine/status.h"
#include "engine/tensor.h"
#include "engine/transport/connection.h"
#include "engine/transport/link_factory.h"

namespace omnib {

// Where this process sits in the job. Ranks [0, nodes) are workers holding
// tensors; ranks [nodes, nodes + aggregators) are dedicated aggregators.
struct JobLayout {
  int rank = 0;
  int nodes = 1;
  int aggregators = 0;  // 0: shards colocated with workers
  int world() const { return nodes + aggregators; }
  bool is_worker() const { return rank < nodes; }
};

// Everything a collective may use while it sets itself up.
struct CollectiveSetup {
  JobLayout job;
  size_t block_size = kDefaultBlockSize;
  DType dtype = DType::kFloat32;
  DeviceKind device = DeviceKind::kCpu;
  std::chrono::milliseconds timeout{60000};
  LinkFactory* links = nullptr;  // our links (TCP or libfabric: `transport`)
  TransportChoice transport;     // --transport / --fabric-provider of the run
  std::string bind_host = "127.0.0.1";  // address this rank listens on (for backends with their own transport)
  Store* store = nullptr;        // rendezvous, for backends that bring their own transport
  uint32_t job_id = 0;
  // Workers on this rank's host and this worker's place among them (from the
  // harness's rendezvous): what picks a worker's GPU.
  int local_index = 0;
  int local_workers = 1;
  // The rate of every rank's link when it is known (emulated links), else
  // 0: what a streaming collective sizes its batches and windows from.
  uint64_t link_rate_bps = 0;
  // How a sharded collective splits block indices among its shards.
  ShardLayout shard_layout = ShardLayout::kStriped;
  // How a block-sparse collective encodes the blocks it sends.
  EncodingPolicy encoding = EncodingPolicy::kAuto;
  // Which way the omni engine sends non-zeros: through shards or straight to every worker.
  RoutePolicy route = RoutePolicy::kAuto;
};

// What the cost model of an algorithm is given. Densities are fractions of
// blocks (or elements) that are non-zero.
struct CostInputs {
  int nodes = 1;
  int aggregators = 0;
  size_t count = 0;      // elements per tensor
  size_t elem_size = 4;  // bytes per element
  size_t block_size = kDefaultBlockSize;
  double element_density = 1;      // largest over ranks
  double block_density = 1;        // largest over ranks
  double union_block_density = 1;  // blocks non-zero on at least one rank
  double union_element_density = 1;
  uint64_t link_rate_bps = 0;  // as in CollectiveSetup: the batch size depends on it
  ShardLayout shard_layout = ShardLayout::kStriped;
  EncodingPolicy encoding = EncodingPolicy::kAuto;
  RoutePolicy route = RoutePolicy::kAuto;  // auto: the route a warm call takes
  // Every rank's non-zeros, when the harness could keep them: then a model
  // counts exactly what its algorithm sends (else it estimates from the
  // densities above).
  const InputSupport* support = nullptr;
};

// Analytic bytes one iteration puts on the wire, headers included.
struct WireCost {
  double sent_per_rank_max = 0;
  double sent_total = 0;
  bool exact = false;  // counted from the inputs' non-zeros, not estimated
};

class Collective {
 public:
  virtual ~Collective() = default;

  // Every rank of the job calls this with the same count, in the same order.
  // Workers pass their tensors (out may alias in: in-place); dedicated
  // aggregator ranks pass views with data == nullptr and the same count.
  virtual Status allreduce(const TensorView& in, const TensorView& out) = 0;

  // Bytes this rank has put on / taken off the wire so far, headers included;
  // nullopt when the backend cannot count them (then wire_note says why).
  virtual std::optional<ByteCounters> wire_counters() const = 0;
  virtual std::string wire_note() const { return ""; }

  // Free text the report shows with this algorithm's rows (e.g. how NCCL
  // ranks share a GPU).
  virtual std::string run_note() const { return ""; }

  // How the last call's data travelled, for collectives with more than one
  // route (a string literal, e.g. "shards" or "direct"); nullptr otherwise.
  virtual const char* last_route() const { return nullptr; }
};

struct CollectiveInfo {
  std::string name;
  std::string summary;
  bool exploits_sparsity = false;
  // Why this build or machine cannot run it, or nullopt when it can.
  std::function<std::optional<std::string>(const CollectiveSetup&)> unavailable_reason;
  std::function<Result<std::unique_ptr<Collective>>(const CollectiveSetup&)> create;
  std::function<WireCost(const CostInputs&)> analytic_cost;
  // Takes tensors in GPU memory (--device cuda); the others are skipped there.
  bool device_tensors = false;
};

// The registry of named collectives. Each algorithm's file registers itself
// with a static CollectiveRegistration.
class CollectiveRegistry {
 public:
  static CollectiveRegistry& instance();
  void add(CollectiveInfo info);
  // Puts `info` in place of the algorithm of the same name: how a program
  // that wraps an algorithm (the test suite's sabotage build) swaps it in.
  // Usage error when no algorithm has that name. Call before any find().
  Status replace(CollectiveInfo info);
  const CollectiveInfo* find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::vector<CollectiveInfo> infos_;
};

struct CollectiveRegistration {
  explicit CollectiveRegistration(CollectiveInfo info) { CollectiveRegistry::instance().add(std::move(info)); }
};

}  // namespace omnib
