#include "tools/schedule/message_schedule.h"

#include <stdexcept>

namespace omnib {

uint32_t MessageSchedule::add(int src, int dst, uint64_t bytes, std::span<const MessageDep> after, double compute_s) {
  if (src < 0 || src >= ranks_ || dst < 0 || dst >= ranks_)
    throw std::out_of_range("schedule: message between ranks " + std::to_string(src) + " and " + std::to_string(dst) +
                            " of " + std::to_string(ranks_));
  const auto id = static_cast<uint32_t>(messages_.size());
  ScheduledMessage m;
  m.src = src;
  m.dst = dst;
  m.bytes = src == dst ? 0 : bytes;
  m.compute_s = compute_s;
  m.deps_begin = static_cast<uint32_t>(deps_.size());
  for (const MessageDep& d : after) {
    if (d.id >= id) throw std::logic_error("schedule: a message depends on a later one");
    deps_.push_back(d);
  }
  m.deps_end = static_cast<uint32_t>(deps_.size());
  messages_.push_back(m);
  return id;
}

std::vector<uint64_t> MessageSchedule::sent_per_rank() const {
  std::vector<uint64_t> out(static_cast<size_t>(ranks_), 0);
  for (const ScheduledMessage& m : messages_) out[static_cast<size_t>(m.src)] += m.bytes;
  return out;
}

std::vector<uint64_t> MessageSchedule::received_per_rank() const {
  std::vector<uint64_t> out(static_cast<size_t>(ranks_), 0);
  for (const ScheduledMessage& m : messages_) out[static_cast<size_t>(m.dst)] += m.bytes;
  return out;
}

uint64_t MessageSchedule::network_messages() const {
  uint64_t n = 0;
  for (const ScheduledMessage& m : messages_) n += m.local() ? 0 : 1;
  return n;
}

void MessageSchedule::add_note(const std::string& text) {
  if (!note_.empty()) note_ += "; ";
  note_ += text;
}

}  // namespace omnib
