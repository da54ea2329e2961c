// The lanes of a baseline whose ranks exchange with every other worker
// (sparcml-split, oktopk): two per rank whatever the job size, where a lane
// per peer would cost threads that grow with the job (engine/lanes/link_lane.h).
// The send lane posts every peer's streams (sparse_stream.h) as the links'
// windows allow; the receive lane takes every peer's frames as they arrive.
// The algorithm says what to send and what to do with what arrives
// (Protocol); this class runs the lanes.
//
// Bounded memory: every link holds at most receive_window(peers) received
// frames of at most kStreamFrameBytes of payload, so a rank's links hold at
// most max(kReceiveBudgetFrames, 2 * peers) of them. Posted frames point
// into the algorithm's memory: the send side copies nothing.
//
// Failure: the first lane that fails aborts every link, which wakes and
// fails the other; a lane fails when nothing moved on this rank for the
// timeout. Threads: run() is called from one thread; the Protocol's send
// calls run on the send lane, receive calls on the receive lane.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "baselines/common/peer_links.h"
#include "baselines/common/stream_poster.h"
#include "engine/collective/collective.h"
#include "engine/lanes/lane_group.h"
#include "engine/lanes/link_lane.h"

namespace omnib {

// The peers of a rank in a full mesh of workers: every other worker, in
// rank order; none for a dedicated aggregator rank, which holds no tensor.
std::vector<int> other_workers(const JobLayout& job);

// The protocols' timeout messages: "<what> from <peers> did not arrive
// within the timeout ...", "nothing arrived from <peers> ...".
std::string did_not_arrive(const std::string& what, const std::vector<int>& peers);
std::string nothing_arrived_from(const std::vector<int>& peers);

class MeshLanes {
 public:
  // What an algorithm does on the lanes.
  class Protocol {
   public:
    virtual ~Protocol() = default;
    enum class Next { kStarted, kWaiting, kNone };
    // Send lane: starts the next stream to peer `i` on `poster` if its data
    // is known (kStarted), or says that it is not yet (kWaiting; name the
    // wait in step.waiting_for) or that every stream to the peer is started
    // (kNone). The stream's memory must stay until the call ends.
    virtual Next start_next_stream(size_t i, StreamPoster& poster, LaneStep& step) = 0;
    // Send lane: every stream to every peer has been sent.
    virtual void sends_finished() {}
    // Send lane, on its timeout when no frame was held up by a link: what
    // data it waited for, and from whom.
    virtual std::string send_data_stalled() const = 0;
    // Receive lane: one pass over the peers' links.
    virtual Result<LaneStep> receive_step() = 0;
    // Receive lane, on its timeout: which peers it waited for.
    virtual std::string receive_stalled() const = 0;
  };

  // Received frames a rank's links hold in all, when it has few peers.
  static constexpr size_t kReceiveBudgetFrames = 32;
  // Frames each link holds: the budget shared among the peers, at least 2
  // (one being read, one arriving) and at most the transport's default.
  static size_t receive_window(size_t peers);

  // `peers`: the ranks this rank (`rank`) exchanges with, in rank order,
  // each reachable in `links`. `links` and `protocol` must outlive this
  // object. No peers: no lanes.
  MeshLanes(PeerLinks& links, int rank, std::vector<int> peers, std::chrono::milliseconds timeout,
            Protocol& protocol);
  ~MeshLanes();  // aborts, joins the lanes, detaches the wakers from the links
  MeshLanes(const MeshLanes&) = delete;
  MeshLanes& operator=(const MeshLanes&) = delete;

  // One collective: runs both lanes until the protocol has sent and
  // received everything and every posted frame has left; the first
  // failure is returned.
  Status run();

  size_t size() const { return peers_.size(); }
  int peer(size_t i) const { return peers_[i]; }
  Connection& link(size_t i) const { return *links_.to(peers_[i]); }
  // The receive lane notifies it when data the send lane waits for is ready.
  Waker& send_waker() { return send_waker_; }

 private:
  struct PeerSend {
    StreamPoster poster;
    bool all_started = false;  // the protocol has no more streams for the peer
    bool done = false;         // ... and every frame to it has left
  };
  Result<LaneStep> send_step();
  std::string send_stalled() const;
  void abort();

  PeerLinks& links_;
  std::vector<int> peers_;
  std::chrono::milliseconds timeout_;
  Protocol& protocol_;
  size_t first_ = 0;  // the send lane's first peer: the one above this rank
  std::vector<PeerSend> sends_;
  Waker send_waker_;     // window room, a finished send, a link failure, data from the receive lane
  Waker receive_waker_;  // a frame, a link failure
  std::atomic<uint64_t> progress_{0};
  std::atomic<bool> aborted_{false};
  std::unique_ptr<LaneGroup> lanes_;  // last: its threads stop before the rest goes
};

}  // namespace omnib
