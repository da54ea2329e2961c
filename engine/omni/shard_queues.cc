#include "engine/omni/shard_queues.h"

#include <string>

namespace omnib {

void ShardQueues::reset() {
  for (auto& w : workers_) {
    while (!w.pending.empty()) {
      retire(w.pending.front());
      w.pending.pop_front();
    }
    w = WorkerQueue{};
  }
}

Status ShardQueues::push(int worker, Frame frame, BatchView view) {
  WorkerQueue& w = workers_[static_cast<size_t>(worker)];
  ++pushes_;
  const uint64_t first = view.count > 0 ? view.indices[0] : view.next;
  if (w.started && (w.last_announced == kEndOfStream || first != w.last_announced))
    return unavailable_error("worker " + std::to_string(worker) + " sent a batch starting at block " +
                             std::to_string(first) + " after announcing " + std::to_string(w.last_announced));
  w.started = true;
  w.last_announced = view.next;
  if (!w.next_known) {
    w.next = first;
    w.next_known = true;
  }
  if (view.count == 0) {
    spare_frames_.push_back(std::move(frame));
    spare_views_.push_back(std::move(view));
    return Status::ok();
  }
  w.pending.push_back(PendingBatch{std::move(frame), std::move(view), 0});
  return Status::ok();
}

void ShardQueues::consume_until(WorkerQueue& w, uint32_t cursor) {
  PendingBatch& p = w.pending.front();
  p.cursor = cursor;
  if (p.cursor < p.view.count) {
    w.next = p.view.indices[p.cursor];
    return;
  }
  w.next = p.view.next;
  retire(p);
  w.pending.pop_front();
  w.between_batches = true;
  ++consumed_;
}

void ShardQueues::retire(PendingBatch& p) {
  spare_frames_.push_back(std::move(p.frame));
  spare_views_.push_back(std::move(p.view));
}

BatchView ShardQueues::take_spare_view() {
  if (spare_views_.empty()) return BatchView{};
  BatchView v = std::move(spare_views_.back());
  spare_views_.pop_back();
  return v;
}

Frame ShardQueues::take_spare_frame() {
  if (spare_frames_.empty()) return Frame{};
  Frame f = std::move(spare_frames_.back());
  spare_frames_.pop_back();
  return f;
}

}  // namespace omnib
