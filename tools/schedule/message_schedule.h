// A collective's message schedule: who sends how many bytes to whom, and
// after what. A message may start once every message it depends on has
// arrived (or, for a paced dependency, once that message's last byte has
// left its sender), and once its sender has computed for compute_s. A message from a rank to itself with
// no bytes is a local step: a join of its dependencies that takes no
// network time. The simulator (tools/simulate) replays schedules; the
// builders (dense_schedules.h, sparse_schedules.h, omni_schedule.h) make
// them from each algorithm's protocol.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace omnib {

// A dependency on message `id`: on its arrival, or paced (see above).
struct MessageDep {
  uint32_t id = 0;
  bool paced = false;
};

struct ScheduledMessage {
  int src = 0;
  int dst = 0;
  uint64_t bytes = 0;
  double compute_s = 0;  // the sender's work between its dependencies and the send
  uint32_t deps_begin = 0, deps_end = 0;  // into MessageSchedule::deps()
  bool local() const { return src == dst; }
};

class MessageSchedule {
 public:
  explicit MessageSchedule(int ranks) : ranks_(ranks) {}

  int ranks() const { return ranks_; }
  // Adds a message; returns its id. Dependencies must be earlier messages.
  uint32_t add(int src, int dst, uint64_t bytes, std::span<const MessageDep> after, double compute_s = 0);
  uint32_t add(int src, int dst, uint64_t bytes, std::initializer_list<MessageDep> after, double compute_s = 0) {
    return add(src, dst, bytes, std::span<const MessageDep>(after.begin(), after.size()), compute_s);
  }
  // A local step of `rank` after `after`.
  uint32_t join(int rank, std::span<const MessageDep> after, double compute_s = 0) {
    return add(rank, rank, 0, after, compute_s);
  }

  const std::vector<ScheduledMessage>& messages() const { return messages_; }
  std::span<const MessageDep> deps_of(const ScheduledMessage& m) const {
    return {deps_.data() + m.deps_begin, m.deps_end - m.deps_begin};
  }
  size_t dep_count() const { return deps_.size(); }

  // Bytes each rank sends and receives over the network (local steps are not).
  std::vector<uint64_t> sent_per_rank() const;
  std::vector<uint64_t> received_per_rank() const;
  // Network messages (local steps left out).
  uint64_t network_messages() const;

  // What the builder merged or approximated, for the record's note.
  void add_note(const std::string& text);
  const std::string& note() const { return note_; }

  // Whether the protocol holds what its senders have in flight to a
  // receiver to a byte budget below a switch port's buffer (omni's credits,
  // stream_tuning.h), so that senders converging on a port never overflow
  // it; otherwise only TCP's windows bound them (the replay's port model,
  // tools/simulate/converging_ports.h).
  void set_flows_budgeted(bool budgeted) { flows_budgeted_ = budgeted; }
  bool flows_budgeted() const { return flows_budgeted_; }

 private:
  int ranks_;
  std::vector<ScheduledMessage> messages_;
  std::vector<MessageDep> deps_;
  std::string note_;
  bool flows_budgeted_ = false;
};

// How a builder lets a rank's fan-out to many peers onto the network. The
// protocols send to all their peers at once; a flow-level simulator's cost
// grows with the flows in flight (all n(n-1) of them at 1024 ranks take
// hours), so past `concurrent_flow_budget` flows a sender's messages of one
// fan-out go one after another in rotated order (peer rank+1 first), each
// once the one paced_lanes before has left the sender (its latency still to
// come): the receivers see no artificial incast, and at most paced_lanes
// flows per fan-out move bytes at once (link_order.h).
struct FlowLimits {
  static constexpr uint64_t kDefaultConcurrentFlows = 1024;
  uint64_t concurrent_flow_budget = kDefaultConcurrentFlows;
  // Flows of one paced fan-out moving bytes at once. One keeps a point of
  // 1024 ranks in minutes, but a flow slowed by a busy receiver then idles
  // its sender (omni at 128 workers, 100 Gbit/s: 5.1 ms against 2.0 ms with
  // 4); four are closer, at 70 times the simulation's time.
  size_t paced_lanes = 1;
  // Whether a job of `ranks` ranks, each sending to `peers` at once, paces.
  bool paces(int ranks, int peers) const {
    return static_cast<uint64_t>(ranks) * static_cast<uint64_t>(peers) > concurrent_flow_budget;
  }
};

// What compute costs, from the calibration (zero: the network alone).
struct ComputeRates {
  double scan_s_per_byte = 0;    // finding and packing a sparse tensor's non-zeros, per tensor byte
  double reduce_s_per_byte = 0;  // adding a received byte into a sum
};

}  // namespace omnib
