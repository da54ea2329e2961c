#include "tools/allreduce/call_round.h"

#include <algorithm>

#include <chrono>
#include <optional>

#include "tools/measure/cpu_time.h"

namespace omnib {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

Status CallRound::run(std::vector<AlgoSlot>& slots, SizeRun& sr, int run, bool timed, uint64_t timed_call) {
  if (timed) OMNIB_RETURN_IF_ERROR(p_.resources.start());
  for (size_t a = 0; a < slots.size(); ++a)
    if (slots[a].collective) OMNIB_RETURN_IF_ERROR(call(slots[a], a, sr, run, timed, timed_call));
  // Every algorithm has left its call: what the process holds now is what
  // the round leaves behind.
  if (timed) OMNIB_RETURN_IF_ERROR(p_.resources.after_timed_round());
  ++sr.call;
  ++sr.round;
  return Status::ok();
}

Status CallRound::call(AlgoSlot& s, size_t a, SizeRun& sr, int run, bool timed, uint64_t timed_call) {
  const Tensors& t = *sr.t;
  // The first call of the first algorithm finds the inputs fresh.
  if (sr.call > 0 || a > 0 || !p_.plan.base.inplace) OMNIB_RETURN_IF_ERROR(p_.tensors.before_call(t, *sr.workload));
  const std::string call_name =
      sr.cfg + "/" + std::to_string(run) + "/" + std::to_string(sr.round) + "/" + std::to_string(a);
  const auto barrier_begin = p_.tracer.before_call(timed, timed_call);
  OMNIB_RETURN_IF_ERROR(store_barrier(p_.store, call_name, p_.job.world()));
  const auto barrier_end = Clock::now();
  // Every rank is past the previous call: its bytes have left the queues.
  const std::optional<size_t> window = timed ? std::optional<size_t>(a) : std::nullopt;
  if (p_.link_meter) OMNIB_RETURN_IF_ERROR(p_.link_meter->switch_to(window));
  if (p_.retransmit_meter) OMNIB_RETURN_IF_ERROR(p_.retransmit_meter->switch_to(window));
  const auto wire_before = s.collective->wire_counters();
  const CpuTime cpu0 = process_cpu_time(CpuReading::kBeforeCall);
  const auto t0 = Clock::now();
  Status st = s.collective->allreduce(t.in, t.out);
  const auto t1 = Clock::now();
  const CpuTime cpu1 = process_cpu_time(CpuReading::kAfterCall);
  if (!st.is_ok()) return st.with_context(s.info->name + ": ");
  OMNIB_RETURN_IF_ERROR(p_.tracer.after_call(
      {s.info->name, sr.config.size_bytes, timed, timed_call, barrier_begin, barrier_end, t0, t1}, s.samples));
  if (timed) {
    s.samples.times_us[static_cast<size_t>(run)].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    CpuTime used = cpu1 - cpu0;
    used.wait_us = std::max(0.0, used.wait_us);  // a thread that ended took its delay along
    s.samples.cpu[static_cast<size_t>(run)] += used;
    if (const char* route = s.collective->last_route()) ++s.samples.routes[route];
    const auto wire_after = s.collective->wire_counters();
    if (wire_before && wire_after) {
      if (!s.samples.wire) s.samples.wire = ByteCounters{};
      *s.samples.wire += *wire_after - *wire_before;
    }
  }
  // No rank checks (or poisons the next output) before every rank has left
  // the call: on a host the ranks share, that work would take the CPU from a
  // rank still in the call and stretch its time.
  OMNIB_RETURN_IF_ERROR(store_barrier(p_.store, call_name + "/done", p_.job.world()));
  if (p_.plan.check) OMNIB_RETURN_IF_ERROR(p_.tensors.check_call(t, sr.call, s.samples));
  if (timed) p_.resources.count_call();
  return Status::ok();
}

}  // namespace omnib
