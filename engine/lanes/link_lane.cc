#include "engine/lanes/link_lane.h"

#include "engine/trace/trace.h"

namespace omnib {

Status run_link_lane(Waker& waker, std::chrono::milliseconds timeout, std::atomic<uint64_t>* progress,
                     const std::function<Result<LaneStep>()>& step, const std::function<std::string()>& stalled) {
  Stall stall(timeout);
  uint64_t seen = progress ? progress->load() : 0;
  // Another lane's moves count as this one's: it may be waiting for them.
  auto others_moved = [&] {
    if (!progress) return false;
    const uint64_t now = progress->load();
    if (now == seen) return false;
    seen = now;
    return true;
  };
  while (true) {
    const uint64_t mark = waker.mark();  // before the pass: no event in between is lost
    auto pass = step();
    if (!pass.is_ok()) return pass.status();
    const LaneStep& s = pass.value();
    if (s.done) return Status::ok();
    if (s.moved) {
      stall.moved();
      if (progress) seen = progress->fetch_add(1) + 1;
      continue;
    }
    if (others_moved()) stall.moved();
    trace::Span wait(s.waiting_for, trace::Kind::kWait, s.wait_args);
    if (waker.wait_since(mark, stall.deadline()) || !stall.expired()) continue;
    wait.end();
    if (others_moved()) {
      stall.moved();
      continue;
    }
    return timeout_error(stalled());
  }
}

std::string name_ranks(const std::vector<int>& ranks, size_t limit) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size() && i < limit; ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > limit) out += " and " + std::to_string(ranks.size() - limit) + " more";
  return out;
}

}  // namespace omnib
