// replay_schedule on SimGrid: no actors; the maestro's completion callbacks
// drive the schedule. A message starts (an Exec for its compute on the
// sender's host, then a Comm) once its dependencies are met; its arrival
// meets its dependents'. SimGrid holds only what is in flight, so memory
// follows the concurrency, not the schedule's length.
//
// Latency is added here, not by SimGrid: the links have none, a Comm ends
// when its last byte has left (what a paced dependent waits for), and the
// message arrives its path's latency later (links on the route times the
// link latency, times the calibrated factor). CM02 would pay the latency
// first; the total of one message is the same, and a sender can then
// follow its last byte at once, as a NIC does, without keeping a window of
// flows in flight to cover the latency: the flows SimGrid shares are only
// those moving bytes, which is what keeps 1024 ranks tractable.
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>
#include <xbt/log.h>

#include <unordered_map>

#include "tools/simulate/converging_ports.h"
#include "tools/simulate/replay.h"
#include "tools/simulate/simgrid_platform.h"

namespace omnib {
namespace sg4 = simgrid::s4u;
namespace {

class Replayer {
 public:
  Replayer(const MessageSchedule& s, std::vector<sg4::Host*> hosts, double link_latency_s, double incast_factor)
      : s_(s),
        hosts_(std::move(hosts)),
        link_latency_s_(link_latency_s),
        ports_(s.flows_budgeted() ? 1.0 : incast_factor),
        waiting_(s.messages().size(), 0) {
    // Who depends on whom: counts, then the dependents of each message (CSR).
    const auto& msgs = s.messages();
    first_dependent_.assign(msgs.size() + 1, 0);
    for (const ScheduledMessage& m : msgs)
      for (const MessageDep& d : s.deps_of(m)) ++first_dependent_[d.id + 1];
    for (size_t i = 0; i < msgs.size(); ++i) first_dependent_[i + 1] += first_dependent_[i];
    dependents_.resize(s.dep_count());
    std::vector<uint32_t> fill(first_dependent_.begin(), first_dependent_.end() - 1);
    for (uint32_t i = 0; i < msgs.size(); ++i)
      for (const MessageDep& d : s.deps_of(msgs[i])) {
        dependents_[fill[d.id]++] = {i, d.paced};
        ++waiting_[i];
      }
  }

  Result<ReplayOutcome> run(sg4::Engine& engine) {
    sg4::Activity::on_completion_cb([this](const sg4::Activity& a) { completed(a); });
    for (uint32_t i = 0; i < s_.messages().size(); ++i)
      if (waiting_[i] == 0) ready_.push_back(i);
    drain();
    engine.run();
    if (arrived_ != s_.messages().size())
      return internal_error("simulation: " + std::to_string(s_.messages().size() - arrived_) + " of " +
                            std::to_string(s_.messages().size()) +
                            " messages never started (a schedule whose dependencies form a cycle)");
    return ReplayOutcome{last_arrival_, s_.network_messages(), peak_flows_};
  }

 private:
  enum class Stage { kCompute, kTransfer };
  struct Live {
    uint32_t id;
    Stage stage;
    sg4::ActivityPtr activity;
    ConvergingPorts::Port* port;  // a transfer's, in the port model
    double latency_s;             // a transfer's, from its last byte's leaving to its arrival
  };

  // Starts every message that became ready, without recursion: a chain of
  // local steps would otherwise nest as deep as it is long.
  void drain() {
    while (!ready_.empty()) {
      const uint32_t id = ready_.back();
      ready_.pop_back();
      const ScheduledMessage& m = s_.messages()[id];
      if (m.compute_s > 0) {
        sg4::ExecPtr exec = sg4::Exec::init();
        exec->set_flops_amount(m.compute_s * kSimulatedHostFlops)->set_host(hosts_[static_cast<size_t>(m.src)]);
        track(id, Stage::kCompute, exec);
        exec->vetoable_start();
      } else {
        transfer(id);
      }
    }
  }

  void transfer(uint32_t id) {
    const ScheduledMessage& m = s_.messages()[id];
    if (m.local()) {
      left(id);
      arrive(id);
      return;
    }
    sg4::CommPtr comm = sg4::Comm::sendto_init(hosts_[static_cast<size_t>(m.src)], hosts_[static_cast<size_t>(m.dst)]);
    comm->set_payload_size(m.bytes);
    // The route, looked up once: the port model wants its last link, the
    // latency its length.
    route_.clear();
    if (ports_.on() || link_latency_s_ > 0) {
      double ignored = 0;
      hosts_[static_cast<size_t>(m.src)]->route_to(hosts_[static_cast<size_t>(m.dst)], route_, &ignored);
    }
    ConvergingPorts::Port* port = ports_.before_start(route_.empty() ? nullptr : route_.back());
    track(id, Stage::kTransfer, comm, port, static_cast<double>(route_.size()) * link_latency_s_);
    comm->vetoable_start();
    ports_.started(port, m.src);
    peak_flows_ = std::max<uint64_t>(peak_flows_, ++in_flight_);
  }

  void track(uint32_t id, Stage stage, sg4::ActivityPtr a, ConvergingPorts::Port* port = nullptr,
             double latency_s = 0) {
    const sg4::Activity* key = a.get();
    live_.emplace(key, Live{id, stage, std::move(a), port, latency_s});
  }

  void completed(const sg4::Activity& a) {
    const auto it = live_.find(&a);
    if (it == live_.end()) return;
    const Live done = it->second;
    live_.erase(it);
    if (done.stage == Stage::kCompute) {
      transfer(done.id);
    } else {
      --in_flight_;
      ports_.finished(done.port, s_.messages()[done.id].src);
      left(done.id);
      const double latency = done.latency_s;
      if (latency > 0) {
        const uint32_t id = done.id;
        simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + latency, [this, id] {
          arrive(id);
          drain();
        });
      } else {
        arrive(done.id);
      }
    }
    drain();
  }

  // Its last byte has left the sender: paced dependents may go.
  void left(uint32_t id) {
    for (uint32_t k = first_dependent_[id]; k < first_dependent_[id + 1]; ++k)
      if (dependents_[k].paced) satisfy(dependents_[k].id);
  }

  void arrive(uint32_t id) {
    ++arrived_;
    last_arrival_ = std::max(last_arrival_, sg4::Engine::get_clock());
    for (uint32_t k = first_dependent_[id]; k < first_dependent_[id + 1]; ++k)
      if (!dependents_[k].paced) satisfy(dependents_[k].id);
  }

  void satisfy(uint32_t id) {
    if (--waiting_[id] == 0) ready_.push_back(id);
  }

  const MessageSchedule& s_;
  const std::vector<sg4::Host*> hosts_;
  const double link_latency_s_;  // per link on a route, calibrated
  ConvergingPorts ports_;
  std::vector<sg4::Link*> route_;
  std::vector<uint32_t> waiting_;  // dependencies not yet met, per message
  std::vector<uint32_t> first_dependent_;
  std::vector<MessageDep> dependents_;
  std::vector<uint32_t> ready_;
  std::unordered_map<const sg4::Activity*, Live> live_;
  uint64_t arrived_ = 0;
  uint64_t in_flight_ = 0;
  uint64_t peak_flows_ = 0;
  double last_arrival_ = 0;
};

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

}  // namespace

Result<ReplayOutcome> replay_schedule(const MessageSchedule& schedule, const PlatformSpec& platform,
                                      const Calibration& calibration) {
  // Quiet unless something is wrong: SimGrid logs every configuration change.
  xbt_log_control_set("root.thresh:critical");
  sg4::Engine engine("omni-bench-simulate");
  // CM02: max-min sharing with the latency and bandwidth as given (LV08,
  // the default, multiplies them by factors fitted to other networks);
  // no cross-traffic of acknowledgements (TCP's are on the reverse
  // direction of a full-duplex link, which other flows may be using).
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/bandwidth-factor:" + number(calibration.bandwidth_factor));
  std::vector<sg4::Host*> hosts = build_platform(platform, schedule.ranks());
  Replayer replayer(schedule, std::move(hosts), platform.latency_s * calibration.latency_factor,
                    calibration.incast_factor);
  return replayer.run(engine);
}

bool simulator_available() { return true; }

std::string simulator_version() {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  return "SimGrid " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace omnib
