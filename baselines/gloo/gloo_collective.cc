#include "baselines/gloo/gloo_collective.h"

#include <atomic>
#include <climits>
#include <cstring>

#include "baselines/gloo/gloo_context.h"
#include "engine/trace/trace.h"

namespace omnib {

std::optional<std::string> gloo_unavailable_reason(const CollectiveSetup& setup) {
  if (setup.device == DeviceKind::kCuda)
    return "the Gloo baselines reduce host memory (this Gloo has no CUDA support): run them with --device cpu";
  if (setup.dtype == DType::kBFloat16)
    return "Gloo has no bfloat16 type (gloo/types.h defines float16 only): run the Gloo baselines with -d half or "
           "float";
  return std::nullopt;
}

Result<std::unique_ptr<Collective>> GlooCollective::create(const CollectiveSetup& setup, GlooAlgorithm which,
                                                           GlooAlgorithmFactory factory) {
  const int base = which == GlooAlgorithm::kBcube ? gloo_bcube_base(setup.job.nodes) : 2;
  const GlooTransport transport = choose_gloo_transport(setup.transport, gloo_verbs_devices());
  std::shared_ptr<gloo::Context> context;
  if (setup.job.is_worker()) {
    // Workers create collectives in the same order, so the n-th Gloo
    // context of every worker meets under the same tag.
    static std::atomic<int> contexts_created{0};
    const std::string tag = std::string(gloo_algorithm_name(which)) + "#" + std::to_string(contexts_created++);
    auto connected = connect_gloo_context(setup, tag, base, transport);
    if (!connected.is_ok()) return connected.status();
    context = connected.take();
  }
  return std::unique_ptr<Collective>(
      new GlooCollective(setup, which, std::move(factory), std::move(context), base, transport));
}

GlooCollective::GlooCollective(const CollectiveSetup& setup, GlooAlgorithm which, GlooAlgorithmFactory factory,
                               std::shared_ptr<gloo::Context> context, int base, GlooTransport transport)
    : ForeignWireCollective(transport.name()),
      job_(setup.job),
      transport_(std::move(transport)),
      which_(which),
      factory_(std::move(factory)),
      context_(std::move(context)),
      base_(base),
      bind_host_(setup.gloo.bind_host) {}

GlooCollective::~GlooCollective() {
  // Gloo's destructors may throw (a pair that saw its peer go first); at
  // teardown there is nobody left to tell.
  (void)run_gloo_guarded("tearing down", [&] {
    algorithm_.reset();
    context_.reset();
  });
}

Status GlooCollective::bind(const TensorView& out) {
  if (algorithm_ && bound_data_ == out.data && bound_count_ == out.count && bound_dtype_ == out.dtype)
    return Status::ok();
  if (out.count > static_cast<size_t>(INT_MAX) / dtype_size(out.dtype))
    return usage_error("Gloo keeps byte counts in an int, so tensors must stay below 2 GiB (asked for " +
                       std::to_string(out.bytes()) + " bytes): use a smaller size");
  Status s = run_gloo_guarded("building the Gloo algorithm object", [&] {
    algorithm_.reset();  // its transport buffers go before the new ones are made
    algorithm_ = factory_(context_, out.data, static_cast<int>(out.count), out.dtype);
  });
  if (!s.is_ok()) return s;
  if (!algorithm_)
    return usage_error("Gloo cannot reduce " + std::string(dtype_name(out.dtype)) + ": use -d float, int32 or half");
  bound_data_ = out.data;
  bound_count_ = out.count;
  bound_dtype_ = out.dtype;
  return Status::ok();
}

Status GlooCollective::allreduce(const TensorView& in, const TensorView& out) {
  if (!job_.is_worker()) return Status::ok();  // Gloo's context spans the workers only
  if (in.count != out.count || in.dtype != out.dtype)
    return usage_error("input and output differ in count or dtype");
  if (in.device != DeviceKind::kCpu || out.device != DeviceKind::kCpu)
    return usage_error("Gloo reduces host memory here: run with --device cpu");
  if (out.count == 0) return Status::ok();
  copied_in_ = in.data != out.data;
  trace::Span copy("copy input", trace::Kind::kCompute);
  if (copied_in_) std::memcpy(out.data, in.data, in.bytes());
  copy.end();
  OMNIB_RETURN_IF_ERROR(bind(out));
  trace::Span call("gloo allreduce", trace::Kind::kBackend, {.bytes = out.bytes()});
  return run_gloo_guarded("Gloo allreduce", [&] { algorithm_->run(); });
}

std::string GlooCollective::run_note() const {
  std::string note = transport_.name();
  if (which_ == GlooAlgorithm::kBcube) {
    note += ", base " + std::to_string(base_);
    if (gloo_bcube_needs_barrier(job_.nodes)) note += ", then an all-to-all barrier (timed) so the buffer is free";
  }
  if (copied_in_) note += "; out of place: input copied to output first (timed), then Gloo reduces the output in place";
  return note;
}

}  // namespace omnib
