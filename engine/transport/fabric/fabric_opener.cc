#include "engine/transport/fabric/fabric_opener.h"

#include <rdma/fi_errno.h>

#include <cstring>

#include "engine/transport/fabric/fabric_connection.h"
#include "engine/transport/fabric/fabric_wire.h"

namespace omnib {

namespace fw = fabric_wire;

namespace {

// Knocks that can arrive at once before the provider has to hold them.
constexpr size_t kKnockReceives = 16;

}  // namespace

FabricOpener::FabricOpener(std::shared_ptr<FabricEndpoint> endpoint, const DeviceContext& context)
    : ep_(std::move(endpoint)), context_(context), addresses_(*ep_), acceptor_(*this) {}

void FabricOpener::start() {
  std::weak_ptr<FabricOpener> weak = weak_from_this();
  ep_->run([self = shared_from_this()] {
    for (size_t i = 0; i < kKnockReceives; ++i) self->receive_knock();
  });
  ep_->set_tick([weak] {
    if (auto self = weak.lock()) self->acceptor_.expire_pending();
  });
}

void FabricOpener::receive_knock() {
  receive(FI_ADDR_UNSPEC, fw::tag(fw::Kind::kKnock, 0), fw::kIgnoreAllButKind, kKnockRecv, 0,
          [this](const std::string& why) { fail(unavailable_error("posting a knock receive failed: " + why)); });
}

void FabricOpener::dial(const HelloClaim& claim, int acceptor, const std::string& address) {
  ep_->run([self = shared_from_this(), claim, acceptor, address] { self->start_dial(claim, acceptor, address); });
}

Result<std::optional<OpenedLink>> FabricOpener::next_link(SteadyClock::time_point deadline) {
  std::unique_lock lock(mu_);
  changed_.wait_until(lock, deadline, [&] { return !ready_.empty() || !failure_.is_ok(); });
  if (!failure_.is_ok()) return failure_;
  if (ready_.empty()) return std::optional<OpenedLink>();
  OpenedLink link = std::move(ready_.front());
  ready_.pop_front();
  return std::optional<OpenedLink>(std::move(link));
}

uint64_t FabricOpener::rejected() const {
  std::lock_guard lock(mu_);
  return rejected_;
}

void FabricOpener::fail(Status why) {
  std::lock_guard lock(mu_);
  if (failure_.is_ok()) failure_ = std::move(why);
  changed_.notify_all();
}

void FabricOpener::link_ready(OpenedLink link) {
  std::lock_guard lock(mu_);
  ready_.push_back(std::move(link));
  changed_.notify_all();
}

void FabricOpener::reject(const std::string& why) {
  std::lock_guard lock(mu_);
  note_rejection(context_.rank, rejected_, "turned away a peer at its fabric endpoint that " + why);
}

uint32_t FabricOpener::new_conn() {
  while (true) {
    const auto conn = static_cast<uint32_t>(random_());
    if (conn != 0 && conns_.insert(conn).second) return conn;
  }
}

// ---- Posting, with retries while the provider's queues are full.

void FabricOpener::post_or_later(std::function<ssize_t()> attempt, Failed failed) {
  if (again_.empty()) {
    const ssize_t rc = attempt();
    if (rc == 0) return;
    if (rc != -FI_EAGAIN) return failed(ep_->error_text(rc));
  }
  again_.push_back({std::move(attempt), std::move(failed)});
  ep_->retry_later(shared_from_this());
}

void FabricOpener::pump() {
  while (!again_.empty()) {
    const ssize_t rc = again_.front().attempt();
    if (rc == -FI_EAGAIN) return ep_->retry_later(shared_from_this());
    Retry done = std::move(again_.front());
    again_.pop_front();
    if (rc != 0) done.failed(ep_->error_text(rc));
  }
}

void FabricOpener::send_bytes(const std::string& bytes, fi_addr_t addr, uint64_t tag, uint32_t kind, uint64_t arg,
                              Failed failed) {
  post_or_later(
      [this, bytes, addr, tag, kind, arg]() -> ssize_t {
        auto slot = ep_->take_slot();
        if (!slot.is_ok()) return -FI_ENOMEM;
        std::memcpy(slot.value().data, bytes.data(), bytes.size());
        iovec iov{slot.value().data, bytes.size()};
        void* desc = slot.value().desc;
        FabricOp* op = ep_->make_op(shared_from_this(), kind, arg, slot.value());
        const ssize_t rc = ep_->send(op, addr, tag, &iov, &desc, 1);
        if (rc != 0) ep_->give_back(slot.value());
        return rc;
      },
      std::move(failed));
}

void FabricOpener::receive(fi_addr_t addr, uint64_t tag, uint64_t ignore, uint32_t kind, uint64_t arg, Failed failed,
                           std::function<void(FabricOp*)> posted) {
  post_or_later(
      [this, addr, tag, ignore, kind, arg, posted = std::move(posted)]() -> ssize_t {
        auto slot = ep_->take_slot();
        if (!slot.is_ok()) return -FI_ENOMEM;
        FabricOp* op = ep_->make_op(shared_from_this(), kind, arg, slot.value());
        const ssize_t rc = ep_->recv(op, addr, tag, ignore, slot.value().data, fw::kHeadBytes, slot.value().desc);
        if (rc != 0) ep_->give_back(slot.value());
        if (rc == 0 && posted) posted(op);
        return rc;
      },
      std::move(failed));
}

// ---- The dialer's side.

void FabricOpener::start_dial(const HelloClaim& claim, int acceptor, const std::string& address) {
  const std::string link = "rank " + std::to_string(context_.rank) + " -> rank " + std::to_string(acceptor) + ": ";
  auto addr = addresses_.hold(address, true);
  if (!addr.is_ok()) return fail(addr.status().with_context(link));
  const uint32_t conn = new_conn();
  dialing_[conn] = {claim, acceptor, addr.value()};
  auto failed = [this, link](const std::string& why) { fail(unavailable_error(link + "knocking failed: " + why)); };
  receive(addr.value(), fw::tag(fw::Kind::kOpening, conn), 0, kChallengeRecv, conn, failed);
  fw::Knock knock{};
  knock.magic = wire::kMagic;
  knock.version = wire::kVersion;
  knock.job_id = context_.job_id;
  knock.dialer_conn = conn;
  const std::string& mine = ep_->address();
  knock.address_len = static_cast<uint16_t>(mine.size());
  std::memcpy(knock.address, mine.data(), std::min(mine.size(), sizeof(knock.address)));
  send_bytes(std::string(reinterpret_cast<const char*>(&knock), sizeof(knock)), addr.value(),
             fw::tag(fw::Kind::kKnock, 0), kKnockSend, conn, failed);
}

void FabricOpener::on_challenge(FabricOp& op, size_t len) {
  auto it = dialing_.find(static_cast<uint32_t>(op.arg));
  if (it == dialing_.end()) return;
  const Dialing d = it->second;
  dialing_.erase(it);
  const std::string link =
      "rank " + std::to_string(context_.rank) + " -> rank " + std::to_string(d.acceptor) + ": the peer's challenge: ";
  if (len != fw::kChallengeMessageBytes)
    return fail(unavailable_error(link + "a message of " + std::to_string(len) + " bytes"));
  wire::FrameHeader h;
  std::memcpy(&h, op.slot.data, sizeof(h));
  Status valid = check_opening_header(h, wire::FrameType::kChallenge, context_.job_id);
  if (!valid.is_ok()) return fail(valid.with_context(link));
  Nonce nonce{};
  std::memcpy(nonce.data(), op.slot.data + sizeof(h), nonce.size());
  fw::OpeningTrailer trailer;
  std::memcpy(&trailer, op.slot.data + sizeof(h) + sizeof(wire::ChallengePayload), sizeof(trailer));
  send_bytes(hello_frame(context_.token, d.claim, d.acceptor, nonce), d.addr,
             fw::tag(fw::Kind::kOpening, trailer.acceptor_conn), kHelloSend, op.arg,
             [this, link](const std::string& why) { fail(unavailable_error(link + "answering it failed: " + why)); });
  const FabricPeer peer{d.addr, static_cast<uint32_t>(op.arg), trailer.acceptor_conn, d.acceptor};
  link_ready({true, d.claim, d.acceptor,
              std::make_unique<FabricConnection>(ep_, peer, context_.job_id, context_.timeout)});
}

void FabricOpener::dial_failed(uint32_t conn, const std::string& why) {
  auto it = dialing_.find(conn);
  const std::string peer = it != dialing_.end() ? "rank " + std::to_string(it->second.acceptor) : "a peer";
  fail(unavailable_error("rank " + std::to_string(context_.rank) + ": opening a link to " + peer + " failed: " + why +
                         " (is it running?)"));
}

// ---- Completions.

void FabricOpener::on_done(FabricOp& op, size_t len, uint64_t) {
  switch (op.kind) {
    case kKnockRecv:
      acceptor_.on_knock(op, len);
      receive_knock();  // the same slot waits for the next knock
      break;
    case kChallengeRecv:
      on_challenge(op, len);
      break;
    case kHelloRecv:
      acceptor_.on_hello(op, len);
      break;
    case kChallengeSend:
      acceptor_.challenge_sent(static_cast<uint32_t>(op.arg));
      break;
    default:
      break;
  }
  ep_->give_back(op.slot);
}

void FabricOpener::on_failed(FabricOp& op, bool canceled, const std::string& why) {
  ep_->give_back(op.slot);
  const auto conn = static_cast<uint32_t>(op.arg);
  switch (op.kind) {
    case kKnockRecv:
      // Too long for a knock (truncated): someone else's message.
      if (!canceled) reject("sent a message that is no knock (" + why + ")");
      receive_knock();
      break;
    case kHelloRecv:
      acceptor_.hello_failed(conn, canceled, why);
      break;
    case kChallengeSend:
      acceptor_.challenge_failed(conn, why);
      break;
    case kChallengeRecv:
    case kKnockSend:
    case kHelloSend:
      if (!canceled) dial_failed(conn, why);
      break;
    default:
      break;
  }
}

}  // namespace omnib
