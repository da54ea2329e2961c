// Where each peer's streams stand on the receive lane of a mesh baseline
// (sparcml-split, oktopk): the receive lane moves a peer from stage to
// stage, and the send lane's timeout message reads them to name the peers
// it waited for, so changes and that read go under a lock.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <mutex>
#include <vector>

#include "baselines/common/mesh_lanes.h"

namespace omnib {

template <class Stage>
class PeerStages {
 public:
  // Every peer of `lanes` at `first`.
  void reset(const MeshLanes& lanes, Stage first) {
    std::lock_guard lock(mu_);
    lanes_ = &lanes;
    stages_.assign(lanes.size(), first);
  }
  // Receive lane only: the lane that changes them reads without the lock.
  Stage operator[](size_t i) const { return stages_[i]; }
  void set(size_t i, Stage stage) {
    std::lock_guard lock(mu_);
    stages_[i] = stage;
  }
  // The ranks of the peers in any of `stages`, in rank order; any lane.
  std::vector<int> peers_in(std::initializer_list<Stage> stages) const {
    std::lock_guard lock(mu_);
    std::vector<int> peers;
    for (size_t i = 0; i < stages_.size(); ++i)
      if (std::find(stages.begin(), stages.end(), stages_[i]) != stages.end()) peers.push_back(lanes_->peer(i));
    return peers;
  }

 private:
  mutable std::mutex mu_;
  const MeshLanes* lanes_ = nullptr;
  std::vector<Stage> stages_;
};

}  // namespace omnib
