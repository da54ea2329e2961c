// The NCCL baselines: ncclAllReduce over one communicator spanning the
// worker ranks, with one algorithm forced (NCCL_ALGO=Ring for `nccl`,
// NCCL_ALGO=Tree for `nccl-tree`; baselines/nccl/nccl_catalog.h). Dedicated
// aggregator ranks take no part.
//
// Placement: worker i on a host gets GPU (local index % visible GPUs). When a
// host has more workers than GPUs, ranks share a GPU; NCCL refuses two ranks
// of one host on one GPU, so each rank then has its own NCCL_HOSTID and NCCL
// treats it as a separate host (socket transport between them). NCCL reads
// both variables only from the environment, which the rank's start-up writes
// once (baselines/nccl/nccl_env_plan.h); this class only reads what it wrote.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <cuda_runtime.h>
#include <nccl.h>

#include "baselines/common/foreign_wire_collective.h"
#include "baselines/nccl/nccl_catalog.h"
#include "engine/collective/collective.h"

namespace omnib {

class NcclAllreduce final : public ForeignWireCollective {
 public:
  // Why this rank cannot run `variant` (NCCL_ALGO set for another variant,
  // no CUDA device visible, or a shared GPU without a host id of its own),
  // or nullopt.
  static std::optional<std::string> unavailable_reason(const CollectiveSetup& setup, const NcclVariant& variant);

  // On workers: picks the GPU, exchanges the ncclUniqueId through
  // setup.nccl.store and creates the communicator, waiting at most
  // setup.timeout. NCCL_ALGO (and NCCL_HOSTID) must be in
  // setup.process_env: start-up wrote them (nccl_process_env).
  static Result<std::unique_ptr<Collective>> create(const CollectiveSetup& setup, const NcclVariant& variant);
  ~NcclAllreduce() override;

  // kCuda views are used as they are; kCpu views are staged through device
  // buffers this object owns (H2D copy, allreduce, D2H copy, all timed).
  // Returns once the result is in `out`; blocks at most setup.timeout, then
  // aborts the communicator (every later call fails).
  Status allreduce(const TensorView& in, const TensorView& out) override;

  std::string run_note() const override;

 private:
  NcclAllreduce(const CollectiveSetup& setup, const NcclVariant& variant);
  Status connect(const CollectiveSetup& setup, const std::string& tag);
  Status ensure_staging(size_t bytes);
  // Polls the communicator (and the stream) until NCCL has queued its work
  // (and the stream has run it), an error shows, or setup.timeout passes.
  enum class Until { kEnqueued, kStreamIdle };
  Status wait_for(const std::string& what, Until until);
  Status abort_communicator(Status why);
  // Name the call and CUDA's or NCCL's own words; the harness adds the
  // rank and the algorithm.
  Status nccl_error(ncclResult_t r, const std::string& call) const;

  JobLayout job_;
  std::chrono::milliseconds timeout_;
  NcclVariant variant_;
  int gpu_ = 0;
  int ranks_on_gpu_ = 1;
  std::optional<EnvChange> algo_set_;     // NCCL_ALGO as start-up wrote it
  std::optional<EnvChange> host_id_set_;  // NCCL_HOSTID, when start-up gave this rank its own
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* staging_ = nullptr;
  size_t staging_bytes_ = 0;
  bool staged_ = false;  // the last call went through the staging buffer
};

}  // namespace omnib
