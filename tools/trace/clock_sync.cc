#include "tools/trace/clock_sync.h"

#include <cstring>
#include <limits>

namespace omnib {
namespace {

constexpr uint32_t kProbeTag = 0x434c4b;  // "CLK"

Status expect_control(const Frame& f, size_t bytes, int peer) {
  if (f.type() != wire::FrameType::kControl || f.header.tag != kProbeTag || f.payload.size() != bytes)
    return unavailable_error("clock alignment: rank " + std::to_string(peer) + " sent frame type " +
                             std::to_string(f.header.type) + " with " + std::to_string(f.payload.size()) +
                             " bytes where a clock probe was expected (ranks out of step?)");
  return Status::ok();
}

}  // namespace

Status serve_clock_probes(const std::vector<Connection*>& links, int rounds, const ClockReader& now) {
  Frame probe;
  for (Connection* link : links) {
    for (int i = 0; i < rounds; ++i) {
      OMNIB_RETURN_IF_ERROR(link->recv(probe));
      const int64_t reading = now();
      OMNIB_RETURN_IF_ERROR(expect_control(probe, sizeof(uint32_t), link->peer_rank()));
      OMNIB_RETURN_IF_ERROR(link->send_bytes(wire::FrameType::kControl, kProbeTag, 0, &reading, sizeof(reading)));
    }
  }
  return Status::ok();
}

Result<ClockOffset> probe_clock(Connection& link, int rounds, const ClockReader& now) {
  ClockOffset best;
  int64_t best_rtt = std::numeric_limits<int64_t>::max();
  Frame reply;
  for (int i = 0; i < rounds; ++i) {
    const auto round = static_cast<uint32_t>(i);
    const int64_t sent = now();
    OMNIB_RETURN_IF_ERROR(link.send_bytes(wire::FrameType::kControl, kProbeTag, 0, &round, sizeof(round)));
    OMNIB_RETURN_IF_ERROR(link.recv(reply));
    const int64_t received = now();
    OMNIB_RETURN_IF_ERROR(expect_control(reply, sizeof(int64_t), link.peer_rank()));
    int64_t reading = 0;
    std::memcpy(&reading, reply.payload.data(), sizeof(reading));
    const int64_t rtt = received - sent;
    if (rtt < best_rtt) {
      best_rtt = rtt;
      best.offset_ns = sent + rtt / 2 - reading;
      best.error_ns = (rtt + 1) / 2;
    }
  }
  best.rounds = rounds;
  return best;
}

Result<ClockOffset> align_clock_to_rank0(LinkFactory& factory, int rank, int world) {
  std::vector<LinkSpec> specs;
  for (int r = 1; r < world; ++r) specs.push_back({r, 0});
  auto made = factory.establish(specs);
  if (!made.is_ok()) return made.status().with_context("clock alignment: ");
  LinkSet links = made.take();
  const ClockReader now = trace::now_ns;
  if (rank == 0) {
    std::vector<Connection*> ends;
    for (auto& end : links.acceptor_end) ends.push_back(end.get());
    OMNIB_RETURN_IF_ERROR(serve_clock_probes(ends, kClockProbeRounds, now));
    return ClockOffset{0, 0, kClockProbeRounds};
  }
  return probe_clock(*links.dialer_end[static_cast<size_t>(rank - 1)], kClockProbeRounds, now);
}

}  // namespace omnib
