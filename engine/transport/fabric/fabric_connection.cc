#include "engine/transport/fabric/fabric_connection.h"

#include "engine/sockets/socket_util.h"
#include "engine/transport/fabric/fabric_link.h"

namespace omnib {

namespace {
// How long a going connection waits for its queued frames to leave, and for
// the provider to finish with memory that post() lent it (a peer that
// stopped reading keeps both forever).
constexpr auto kLentMemoryWait = std::chrono::seconds(1);
}  // namespace

FabricConnection::FabricConnection(std::shared_ptr<FabricEndpoint> endpoint, const FabricPeer& peer, uint32_t job_id,
                                   std::chrono::milliseconds timeout)
    : link_(std::make_shared<FabricLink>(std::move(endpoint), peer, job_id, timeout)) {
  link_->start();
}

FabricConnection::~FabricConnection() {
  // Frames send() queued leave first, as a closed socket still delivers
  // what was written to it (bounded: a peer that stopped reading).
  link_->sender().wait_sends_done(SteadyClock::now() + kLentMemoryWait);
  link_->close("the connection was closed");
  link_->sender().wait_lent_memory(SteadyClock::now() + kLentMemoryWait);
}

ConnectionCore& FabricConnection::core() const { return link_->core(); }

Status FabricConnection::send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) {
  return link_->sender().post(type, tag, seq, parts, true, deadline_after(core().timeout())).status();
}

Result<std::optional<uint64_t>> FabricConnection::post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                                       std::span<const iovec> parts) {
  return link_->sender().post(type, tag, seq, parts, false, SteadyClock::time_point::min());
}

Status FabricConnection::recv(Frame& frame) {
  Status got = FramedConnection::recv(frame);
  link_->pump_if_asked();
  return got;
}

Result<bool> FabricConnection::try_recv(Frame& frame) {
  auto got = FramedConnection::try_recv(frame);
  link_->pump_if_asked();
  return got;
}

void FabricConnection::abort() { link_->close("connection was aborted"); }

FabricSendPaths FabricConnection::send_paths() const { return link_->sender().paths(); }

}  // namespace omnib
