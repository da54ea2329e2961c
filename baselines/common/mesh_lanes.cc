#include "baselines/common/mesh_lanes.h"

#include <algorithm>

#include "engine/trace/trace.h"

namespace omnib {

std::vector<int> other_workers(const JobLayout& job) {
  std::vector<int> peers;
  if (job.is_worker())
    for (int r = 0; r < job.nodes; ++r)
      if (r != job.rank) peers.push_back(r);
  return peers;
}

std::string did_not_arrive(const std::string& what, const std::vector<int>& peers) {
  return what + " from " + name_ranks(peers) +
         " did not arrive within the timeout (is a peer stuck? raise -T if it is only slow)";
}

std::string nothing_arrived_from(const std::vector<int>& peers) {
  return "nothing arrived from " + name_ranks(peers) +
         " within the timeout (is a peer stuck? raise -T if it is only slow)";
}

size_t MeshLanes::receive_window(size_t peers) {
  constexpr size_t kTransportDefault = 16;
  return std::clamp<size_t>(kReceiveBudgetFrames / std::max<size_t>(1, peers), 2, kTransportDefault);
}

MeshLanes::MeshLanes(PeerLinks& links, int rank, std::vector<int> peers, std::chrono::milliseconds timeout,
                     Protocol& protocol)
    : links_(links), peers_(std::move(peers)), timeout_(timeout), protocol_(protocol), sends_(peers_.size()) {
  const size_t window = receive_window(peers_.size());
  for (size_t i = 0; i < peers_.size(); ++i) {
    link(i).set_wakers(&receive_waker_, &send_waker_);
    link(i).set_windows(window, link(i).send_window(), 0);
  }
  // Each rank starts with the peer above it, so that the ranks' first
  // frames go to different peers.
  if (!peers_.empty())
    first_ = static_cast<size_t>(std::count_if(peers_.begin(), peers_.end(), [&](int p) { return p < rank; })) %
             peers_.size();
  lanes_ = std::make_unique<LaneGroup>(peers_.empty() ? 0 : 2);
}

MeshLanes::~MeshLanes() {
  abort();
  lanes_.reset();
  // The links outlive this object's wakers otherwise.
  for (size_t i = 0; i < peers_.size(); ++i) link(i).set_wakers(nullptr, nullptr);
}

void MeshLanes::abort() {
  aborted_ = true;
  links_.abort_all();
  send_waker_.notify();
  receive_waker_.notify();
}

Status MeshLanes::run() {
  if (peers_.empty()) return Status::ok();
  for (size_t i = 0; i < peers_.size(); ++i) {
    sends_[i].poster.attach(link(i));
    sends_[i].all_started = sends_[i].done = false;
  }
  const std::function<Result<LaneStep>()> steps[2] = {[this] { return send_step(); },
                                                      [this] { return protocol_.receive_step(); }};
  const std::function<std::string()> stalled[2] = {[this] { return send_stalled(); },
                                                   [this] { return protocol_.receive_stalled(); }};
  std::function<Status(int)> body = [&](int lane) {
    trace::name_thread(lane == 0 ? "send to peers" : "receive from peers");
    const auto step = [&]() -> Result<LaneStep> {
      if (aborted_) return unavailable_error("aborted after another lane failed");
      return steps[lane]();
    };
    return run_link_lane(lane == 0 ? send_waker_ : receive_waker_, timeout_, &progress_, step, stalled[lane]);
  };
  std::function<void()> on_failure = [this] { abort(); };
  return lanes_->run(body, on_failure);
}

// Every peer in turn: start its streams as the protocol has data for them,
// post what its link's window takes, and once all is started, wait until
// every frame has left (the memory they point into stays the caller's).
Result<LaneStep> MeshLanes::send_step() {
  LaneStep step;
  step.waiting_for = "wait window";
  bool all_done = true;
  for (size_t k = 0; k < peers_.size(); ++k) {
    const size_t i = (first_ + k) % peers_.size();
    PeerSend& s = sends_[i];
    if (s.done) continue;
    while (!s.all_started && s.poster.all_posted()) {
      const Protocol::Next next = protocol_.start_next_stream(i, s.poster, step);
      if (next == Protocol::Next::kWaiting) break;
      s.all_started = next == Protocol::Next::kNone;
      step.moved |= next == Protocol::Next::kStarted;
    }
    auto posted = s.poster.post_more();
    if (!posted.is_ok()) return posted.status();
    step.moved |= posted.value();
    s.done = s.all_started && s.poster.all_posted() && s.poster.finished();
    step.moved |= s.done;
    all_done &= s.done;
  }
  if (all_done) {
    protocol_.sends_finished();
    step.done = true;
  }
  return step;
}

std::string MeshLanes::send_stalled() const {
  std::vector<int> held;  // peers whose links hold frames back
  for (size_t i = 0; i < peers_.size(); ++i)
    if (!sends_[i].poster.all_posted() || (sends_[i].all_started && !sends_[i].done)) held.push_back(peers_[i]);
  if (held.empty()) return protocol_.send_data_stalled();
  return "frames to " + name_ranks(held) + " did not leave within the timeout (is a peer stuck or not reading?)";
}

}  // namespace omnib
