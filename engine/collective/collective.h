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

#include "engine/blocks/input_stats.h"
#include "engine/blocks/input_support.h"
#include "engine/collective/process_env.h"
#include "engine/omni/settings/omni_settings.h"
#include "engine/store/store.h"
#include "engine/base/status.h"
#include "engine/base/tensor.h"
#include "engine/transport/connection.h"
#include "engine/links/link_factory.h"

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

// What the backends that bring their own transport and rendezvous need:
// Gloo listens on bind_host; both meet their peers through the store, under
// keys of this job.
struct GlooSettings {
  std::string bind_host = "127.0.0.1";  // address this rank listens on
  Store* store = nullptr;
  uint32_t job_id = 0;
};
struct NcclSettings {
  Store* store = nullptr;  // where rank 0 publishes the ncclUniqueId
  uint32_t job_id = 0;
};

// Everything a collective may use while it sets itself up: what every
// algorithm needs, then one member per family of algorithms with that
// family's own settings (as gloo gives each algorithm its options).
struct CollectiveSetup {
  JobLayout job;
  DType dtype = DType::kFloat32;
  DeviceKind device = DeviceKind::kCpu;
  std::chrono::milliseconds timeout{60000};
  LinkFactory* links = nullptr;  // our links (TCP or libfabric: `transport`)
  TransportChoice transport;     // --transport / --fabric-provider of the run
  // Workers on this rank's host and this worker's place among them (from the
  // harness's rendezvous): what picks a worker's GPU.
  int local_index = 0;
  int local_workers = 1;
  // What this rank's start-up wrote into its environment for the run's
  // algorithms (CollectiveInfo::process_env), and what it replaced.
  std::vector<EnvChange> process_env;

  OmniSettings omni;  // omni and ps
  GlooSettings gloo;
  NcclSettings nccl;
};

// What the cost model of an algorithm is given.
struct CostInputs {
  int nodes = 1;
  int aggregators = 0;
  size_t count = 0;      // elements per tensor
  size_t elem_size = 4;  // bytes per element
  // How dense the inputs are, measured at omni.block_size (dense unless told).
  InputStats stats{1, 1, 1, 1, 1};
  // omni's settings (its batch size depends on the link rate; route auto:
  // the route a warm call takes).
  OmniSettings omni;
  // Every rank's non-zeros, when the harness could keep them: then a model
  // counts exactly what its algorithm sends (else it estimates from `stats`).
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
  // The environment a rank placed at `p` needs for this algorithm
  // (engine/collective/process_env.h), written once at the rank's start-up;
  // the collective finds it in CollectiveSetup::process_env. Pure: it must
  // not touch a device or the environment. nullptr: nothing.
  std::function<std::vector<EnvSetting>(const ProcessPlacement& p)> process_env = nullptr;
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
