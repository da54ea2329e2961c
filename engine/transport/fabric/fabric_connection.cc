#include "engine/transport/fabric/fabric_connection.h"

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
  link_->wait_sends_done(SteadyClock::now() + kLentMemoryWait);
  link_->close("the connection was closed");
  link_->wait_lent_memory(SteadyClock::now() + kLentMemoryWait);
}

Status FabricConnection::send(wire::FrameType type, uint32_t tag, uint64_t seq, std::span<const iovec> parts) {
  auto posted = link_->post(type, tag, seq, parts, true, deadline_after(link_->timeout()));
  return posted.status();
}

Status FabricConnection::recv(Frame& frame) { return link_->recv(frame); }
Result<bool> FabricConnection::try_recv(Frame& frame) { return link_->try_recv(frame); }

Result<std::optional<uint64_t>> FabricConnection::post(wire::FrameType type, uint32_t tag, uint64_t seq,
                                                       std::span<const iovec> parts) {
  return link_->post(type, tag, seq, parts, false, SteadyClock::time_point::min());
}

uint64_t FabricConnection::sends_done() const { return link_->sends_done(); }
Status FabricConnection::health() const { return link_->health(); }
void FabricConnection::set_wakers(Waker* on_receive, Waker* on_send) { link_->set_wakers(on_receive, on_send); }
void FabricConnection::set_windows(size_t recv_frames, size_t send_frames, size_t inflight_bytes) {
  link_->set_windows(recv_frames, send_frames, inflight_bytes);
}
size_t FabricConnection::recv_window() const { return link_->recv_window(); }
size_t FabricConnection::send_window() const { return link_->send_window(); }
ByteCounters FabricConnection::counters() const { return link_->counters(); }
void FabricConnection::abort() { link_->close("connection was aborted"); }
int FabricConnection::peer_rank() const { return link_->peer_rank(); }
FabricConnection::SendPaths FabricConnection::send_paths() const { return link_->send_paths(); }

}  // namespace omnib
