#include "engine/lanes/lane_group.h"

#include <pthread.h>

#include <string>

namespace omnib {

LaneGroup::LaneGroup(int lanes) : lanes_(lanes < 0 ? 0 : lanes) {
  for (int i = 0; i < lanes_; ++i) work_cvs_.push_back(std::make_unique<std::condition_variable>());
  for (int i = 1; i < lanes_; ++i) threads_.emplace_back([this, i] { lane_main(i); });
}

LaneGroup::~LaneGroup() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& cv : work_cvs_) cv->notify_one();
  }
  for (auto& t : threads_) t.join();
}

Status LaneGroup::run(int active, const std::function<Status(int)>& body, const std::function<void()>& on_failure) {
  if (active < 0 || active > lanes_)
    return internal_error("a call asked for " + std::to_string(active) + " lanes of a group of " +
                          std::to_string(lanes_));
  if (active == 0) return Status::ok();
  {
    std::lock_guard lock(mu_);
    body_ = &body;
    on_failure_ = &on_failure;
    first_failure_ = Status::ok();
    remaining_ = active;
    active_ = active;
    ++generation_;
    for (int i = 1; i < active; ++i) work_cvs_[static_cast<size_t>(i)]->notify_one();
  }
  // A track only while tracing (recording changes between calls, never
  // during one): a run without a trace allocates nothing for it.
  const bool tracing = trace::recording();
  if (tracing && !track_) track_ = std::make_unique<trace::Track>();
  if (tracing) track_->enter();
  const Status s = body(0);
  if (tracing) track_->leave();
  finish(s);
  std::unique_lock lock(mu_);
  done_cv_.wait(lock, [&] { return remaining_ == 0; });
  body_ = nullptr;
  on_failure_ = nullptr;
  return first_failure_;
}

void LaneGroup::finish(const Status& s) {
  bool first = false;
  {
    std::lock_guard lock(mu_);
    if (!s.is_ok() && first_failure_.is_ok()) {
      first_failure_ = s;
      first = true;
    }
  }
  if (first) (*on_failure_)();  // outside the lock: it may block briefly
  std::lock_guard lock(mu_);
  if (--remaining_ == 0) done_cv_.notify_all();
}

void LaneGroup::lane_main(int lane) {
  // Named for top -H, perf and debuggers (at most 15 characters).
  pthread_setname_np(pthread_self(), ("omnib lane " + std::to_string(lane)).c_str());
  uint64_t seen = 0;
  while (true) {
    const std::function<Status(int)>* body;
    {
      std::unique_lock lock(mu_);
      work_cvs_[static_cast<size_t>(lane)]->wait(
          lock, [&] { return stopping_ || (generation_ != seen && lane < active_); });
      if (stopping_) return;
      seen = generation_;
      body = body_;
    }
    finish((*body)(lane));
  }
}

}  // namespace omnib
