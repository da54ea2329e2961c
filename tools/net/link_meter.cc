#include "tools/net/link_meter.h"

#include <cstdlib>

#include "tools/net/qdisc_counter.h"
#include "tools/net/tcp_retransmits.h"

namespace omnib {

Result<std::unique_ptr<LinkMeter>> LinkMeter::for_this_rank(size_t slots) {
  const char* dev = std::getenv(kLinkDeviceVar);
  if (!dev || !*dev)
    return unavailable_error(std::string(kLinkDeviceVar) +
                             " is not set: --net emulate ranks must be started by omni-bench's own launcher");
  auto qdisc = QdiscCounter::open(dev);
  if (!qdisc.is_ok()) return qdisc.status().with_context("the emulated link's counter: ");
  std::shared_ptr<QdiscCounter> shared = qdisc.take();
  return on([shared] { return shared->sent_bytes(); }, slots);
}

Result<std::unique_ptr<LinkMeter>> LinkMeter::retransmits_of_this_rank(size_t slots) {
  return on(tcp_retransmitted_segments, slots);
}

Result<std::unique_ptr<LinkMeter>> LinkMeter::on(Counter counter, size_t slots) {
  std::unique_ptr<LinkMeter> meter(new LinkMeter(std::move(counter), slots));
  auto first = meter->counter_();
  if (!first.is_ok()) return first.status();
  meter->mark_ = first.value();
  return meter;
}

void LinkMeter::reset() {
  for (auto& s : sent_) s.reset();
  open_.reset();
}

Status LinkMeter::switch_to(std::optional<size_t> slot) {
  auto now = counter_();
  if (!now.is_ok()) return now.status();
  if (open_ && *open_ < sent_.size()) sent_[*open_] = sent_[*open_].value_or(0) + (now.value() - mark_);
  open_ = slot;
  mark_ = now.value();
  return Status::ok();
}

std::optional<uint64_t> LinkMeter::sent(size_t slot) const {
  return slot < sent_.size() ? sent_[slot] : std::nullopt;
}

}  // namespace omnib
