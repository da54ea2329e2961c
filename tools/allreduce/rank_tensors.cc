#include "tools/allreduce/rank_tensors.h"

#include "tools/allreduce/input_reference.h"
#include "tools/measure/call_check.h"

namespace omnib {
namespace {

TensorView view_of(std::vector<uint8_t>& buf, size_t count, DType dtype) {
  return TensorView{buf.data(), count, dtype, DeviceKind::kCpu};
}

}  // namespace

RankTensors::RankTensors(int rank, int nodes, bool worker, bool inplace, size_t largest, DeviceTensors* device)
    : rank_(rank),
      nodes_(nodes),
      worker_(worker),
      inplace_(inplace),
      buffers_(worker ? std::make_unique<Buffers>(largest) : nullptr),
      device_(device) {}

Result<Tensors> RankTensors::prepare(size_t count, DType dtype, size_t block_size, const Workload& workload,
                                     bool keep_support, InputStats& stats) {
  Tensors t;
  if (!worker_) {
    t.in = t.out = TensorView{nullptr, count, dtype, DeviceKind::kCpu};
    return t;
  }
  t.host_in = view_of(buffers_->input, count, dtype);
  t.host_out = inplace_ ? t.host_in : view_of(buffers_->output, count, dtype);
  t.reference = view_of(buffers_->reference, count, dtype);
  PreparedInputs prepared = prepare_inputs(workload, rank_, nodes_, block_size, t.host_in, t.reference,
                                           view_of(buffers_->scratch, count, dtype), keep_support);
  stats = prepared.stats;
  support_ = std::move(prepared.support);
  t.in = t.host_in;
  t.out = t.host_out;
  if (device_) {
    // Inputs are made and checked on the host; the collectives see GPU copies.
    t.in = device_->input(count, dtype);
    t.out = inplace_ ? t.in : device_->output(count, dtype);
    OMNIB_RETURN_IF_ERROR(device_->upload(t.host_in));
  }
  return t;
}

RankTensors::HostBuffers RankTensors::host_buffers() const {
  if (!buffers_) return {};
  return {buffers_->input.data(), buffers_->output.data()};
}

Status RankTensors::before_call(const Tensors& t, const Workload& workload) const {
  if (!worker_) return Status::ok();
  if (inplace_) {
    workload.fill(rank_, t.host_in);
    return device_ ? device_->upload(t.host_in) : Status::ok();
  }
  if (device_) return device_->fill(t.out, poison_byte(t.out.dtype));
  poison(t.out);
  return Status::ok();
}

Status RankTensors::check_call(const Tensors& t, uint64_t call, RankSamples& samples) const {
  if (!worker_) return Status::ok();
  if (device_) OMNIB_RETURN_IF_ERROR(device_->download(t.out, t.host_out));
  const uint64_t wrong = count_wrong(t.host_out, t.reference);
  if (wrong) samples.wrong[call] = wrong;
  ++samples.calls_checked;
  return Status::ok();
}

}  // namespace omnib
