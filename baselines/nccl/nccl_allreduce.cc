#include "baselines/nccl/nccl_allreduce.h"

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "baselines/nccl/nccl_catalog.h"
#include "baselines/nccl/nccl_env_plan.h"
#include "cuda/cuda_status.h"
#include "engine/trace/trace.h"

namespace omnib {
namespace {

using Clock = std::chrono::steady_clock;

// Returns from the enclosing member function with a Status naming the call
// and the error. (CUDA calls use cuda/cuda_status.h's OMNIB_CUDA_TRY.)
// Non-blocking communicators answer ncclInProgress while work is queued.
#define OMNIB_NCCL_TRY(call)                                   \
  do {                                                         \
    ncclResult_t omnib_nccl_ = (call);                         \
    if (omnib_nccl_ != ncclSuccess && omnib_nccl_ != ncclInProgress) \
      return nccl_error(omnib_nccl_, #call);                   \
  } while (0)

std::optional<ncclDataType_t> nccl_type(DType t) {
  switch (t) {
    case DType::kFloat32: return ncclFloat32;
    case DType::kInt32: return ncclInt32;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kFloat16: return ncclFloat16;
  }
  return std::nullopt;
}

// "NCCL_ALGO=Ring" and, when the user had set another value, that it replaced it.
std::string env_note(const EnvChange& c) {
  std::string note = c.name + "=" + c.value;
  if (c.previous && *c.previous != c.value) note += " (replacing " + c.name + "=" + *c.previous + ")";
  return note;
}

}  // namespace

std::optional<std::string> NcclAllreduce::unavailable_reason(const CollectiveSetup& setup,
                                                              const NcclVariant& variant) {
  if (!setup.job.is_worker()) return std::nullopt;  // aggregators never touch a GPU
  if (auto conflict = algo_conflict(variant, setup.process_env)) return conflict;
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess)
    return std::string("no CUDA device visible (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
  if (devices == 0) return std::string("no CUDA device visible (cudaGetDeviceCount found 0; check CUDA_VISIBLE_DEVICES)");
  const int gpu = nccl_gpu_of(setup.local_index, devices);
  return shared_gpu_problem(gpu, ranks_on_gpu(gpu, setup.local_workers, devices),
                            find_env_change(setup.process_env, kNcclHostIdVar) != nullptr);
}

NcclAllreduce::NcclAllreduce(const CollectiveSetup& setup, const NcclVariant& variant)
    : ForeignWireCollective("NCCL"), job_(setup.job), timeout_(setup.timeout), variant_(variant) {}

Result<std::unique_ptr<Collective>> NcclAllreduce::create(const CollectiveSetup& setup, const NcclVariant& variant) {
  std::unique_ptr<NcclAllreduce> c(new NcclAllreduce(setup, variant));
  if (setup.job.is_worker()) {
    if (setup.nccl.store == nullptr) return internal_error("nccl needs setup.nccl.store to exchange its unique id");
    // Workers create collectives in the same order: the n-th NCCL
    // communicator of every worker meets under the same keys.
    static std::atomic<int> communicators_created{0};
    OMNIB_RETURN_IF_ERROR(c->connect(setup, "nccl/" + std::to_string(setup.nccl.job_id) + "/" +
                                                std::to_string(communicators_created++)));
  }
  return std::unique_ptr<Collective>(std::move(c));
}

Status NcclAllreduce::connect(const CollectiveSetup& setup, const std::string& tag) {
  int devices = 0;
  OMNIB_CUDA_TRY(cudaGetDeviceCount(&devices));
  if (devices == 0) return unavailable_error("no CUDA device visible");

  // Which workers share this host decides the GPU and whether it is shared.
  gpu_ = nccl_gpu_of(setup.local_index, devices);
  ranks_on_gpu_ = ranks_on_gpu(gpu_, setup.local_workers, devices);

  // NCCL reads these when it builds the communicator; start-up wrote them
  // (the environment is not written once other threads run).
  const EnvChange* algo = find_env_change(setup.process_env, kNcclAlgoVar);
  if (algo == nullptr || algo->value != variant_.nccl_algo)
    return internal_error(std::string("NCCL_ALGO was not set to ") + variant_.nccl_algo + " for " + variant_.name +
                          " at the rank's start-up (please report it with the command line)");
  algo_set_ = *algo;
  if (const EnvChange* host_id = find_env_change(setup.process_env, kNcclHostIdVar)) host_id_set_ = *host_id;

  OMNIB_CUDA_TRY(cudaSetDevice(gpu_));
  OMNIB_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));

  ncclUniqueId id;
  const std::string id_key = tag + "/unique_id";
  if (job_.rank == 0) {
    OMNIB_NCCL_TRY(ncclGetUniqueId(&id));
    OMNIB_RETURN_IF_ERROR(setup.nccl.store->set(id_key, std::string(id.internal, sizeof(id.internal))));
  } else {
    auto got = setup.nccl.store->get(id_key);
    if (!got.is_ok()) return got.status().with_context("nccl unique id: ");
    if (got.value().size() != sizeof(id.internal))
      return internal_error("nccl unique id has " +
                            std::to_string(got.value().size()) + " bytes, expected " +
                            std::to_string(sizeof(id.internal)) + " (mixed omni-bench builds?)");
    std::memcpy(id.internal, got.value().data(), sizeof(id.internal));
  }

  // Non-blocking, so a rank that never arrives costs a timeout, not a hang.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t init = ncclCommInitRankConfig(&comm_, job_.nodes, id, job_.rank, &config);
  if (init != ncclSuccess && init != ncclInProgress)
    return abort_communicator(nccl_error(init, "ncclCommInitRankConfig"));
  return wait_for("ncclCommInitRankConfig", Until::kStreamIdle);
}

NcclAllreduce::~NcclAllreduce() {
  if (comm_ != nullptr) {
    cudaSetDevice(gpu_);
    // Finalize (non-blocking here: poll it, within the timeout), then free;
    // a communicator that cannot finalize is aborted instead.
    ncclResult_t r = ncclCommFinalize(comm_);
    const auto deadline = Clock::now() + timeout_;
    while (r == ncclInProgress && Clock::now() < deadline) {
      std::this_thread::yield();
      if (ncclCommGetAsyncError(comm_, &r) != ncclSuccess) r = ncclInternalError;
    }
    if (r == ncclSuccess)
      ncclCommDestroy(comm_);
    else
      ncclCommAbort(comm_);
  }
  if (staging_ != nullptr) cudaFree(staging_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status NcclAllreduce::nccl_error(ncclResult_t r, const std::string& call) const {
  std::string detail = ncclGetLastError(comm_);
  return unavailable_error(call + " failed: " + ncclGetErrorString(r) +
                           (detail.empty() ? "" : " (" + detail + ")") +
                           "; NCCL_DEBUG=INFO in the environment shows NCCL's own log");
}

Status NcclAllreduce::abort_communicator(Status why) {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
  return why;
}

Status NcclAllreduce::wait_for(const std::string& what, Until until) {
  const auto deadline = Clock::now() + timeout_;
  while (true) {
    ncclResult_t async = ncclSuccess;
    if (comm_ != nullptr) {
      ncclResult_t r = ncclCommGetAsyncError(comm_, &async);
      if (r != ncclSuccess) return abort_communicator(nccl_error(r, "ncclCommGetAsyncError"));
      if (async != ncclSuccess && async != ncclInProgress) return abort_communicator(nccl_error(async, what));
    }
    if (async == ncclSuccess) {
      if (until == Until::kEnqueued) return Status::ok();
      cudaError_t q = cudaStreamQuery(stream_);
      if (q == cudaSuccess) return Status::ok();
      if (q != cudaErrorNotReady) return abort_communicator(gpu::cuda_status((what + " (cudaStreamQuery)").c_str(), q));
    }
    if (Clock::now() > deadline)
      return abort_communicator(timeout_error(
          what + " did not finish within " +
          std::to_string(timeout_.count()) + " ms (a peer is dead or stuck; raise --timeout if it is only slow)"));
    std::this_thread::yield();
  }
}

Status NcclAllreduce::ensure_staging(size_t bytes) {
  if (bytes <= staging_bytes_) return Status::ok();
  if (staging_ != nullptr) OMNIB_CUDA_TRY(cudaFree(staging_));
  staging_ = nullptr;
  staging_bytes_ = 0;
  OMNIB_CUDA_TRY(cudaMalloc(&staging_, bytes));
  staging_bytes_ = bytes;
  return Status::ok();
}

Status NcclAllreduce::allreduce(const TensorView& in, const TensorView& out) {
  if (!job_.is_worker()) return Status::ok();  // the communicator spans the workers only
  if (comm_ == nullptr) return unavailable_error("the communicator was aborted by an earlier failure");
  if (in.count != out.count || in.dtype != out.dtype)
    return usage_error("input and output differ in count or dtype");
  if (in.device != out.device) return usage_error("input and output must both be host or both be device memory");
  auto type = nccl_type(out.dtype);
  if (!type) return usage_error("cannot reduce " + std::string(dtype_name(out.dtype)) + ": use -d " + std::string(dtype_choices()));
  if (out.count == 0) return Status::ok();

  OMNIB_CUDA_TRY(cudaSetDevice(gpu_));
  trace::Span call("nccl allreduce", trace::Kind::kBackend, {.bytes = out.bytes()});
  staged_ = out.device == DeviceKind::kCpu;
  if (!staged_) {
    OMNIB_NCCL_TRY(ncclAllReduce(in.data, out.data, out.count, *type, ncclSum, comm_, stream_));
    return wait_for("ncclAllReduce", Until::kStreamIdle);
  }
  OMNIB_RETURN_IF_ERROR(ensure_staging(out.bytes()));
  OMNIB_CUDA_TRY(cudaMemcpyAsync(staging_, in.data, in.bytes(), cudaMemcpyHostToDevice, stream_));
  OMNIB_NCCL_TRY(ncclAllReduce(staging_, staging_, out.count, *type, ncclSum, comm_, stream_));
  // A non-blocking communicator may still be enqueueing; the copy back
  // must queue behind the allreduce.
  OMNIB_RETURN_IF_ERROR(wait_for("ncclAllReduce", Until::kEnqueued));
  OMNIB_CUDA_TRY(cudaMemcpyAsync(out.data, staging_, out.bytes(), cudaMemcpyDeviceToHost, stream_));
  return wait_for("ncclAllReduce and the copy back to the host", Until::kStreamIdle);
}

std::string NcclAllreduce::run_note() const {
  if (!algo_set_) return "";  // an aggregator: no communicator
  std::string note = env_note(*algo_set_) + " set in the environment at the rank's start-up";
  if (staged_) note += "; host tensors staged through GPU buffers: times include the H2D and D2H copies";
  if (!host_id_set_) return note;
  if (ranks_on_gpu_ > 1)
    note += "; " + std::to_string(ranks_on_gpu_) + " ranks share one GPU: each has its own NCCL_HOSTID";
  else
    note += "; this host runs more workers than it has GPUs: each has its own NCCL_HOSTID";
  note += ", so NCCL sees separate hosts and uses its socket transport between them";
  if (host_id_set_->previous) note += " (replacing NCCL_HOSTID=" + *host_id_set_->previous + ")";
  return note;
}

namespace {

const bool kNcclRegistered = [] {
  for (const NcclVariant& v : kNcclVariants)
    CollectiveRegistry::instance().add(CollectiveInfo{
        v.name,
        v.summary,
        false,
        [v](const CollectiveSetup& s) { return NcclAllreduce::unavailable_reason(s, v); },
        [v](const CollectiveSetup& s) { return NcclAllreduce::create(s, v); },
        v.analytic_cost,
        true,
        [v](const ProcessPlacement& p) { return nccl_process_env(v, p); },
    });
  return true;
}();

}  // namespace
}  // namespace omnib
