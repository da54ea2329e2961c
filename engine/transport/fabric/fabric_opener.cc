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

template <typename T>
std::string bytes_of_struct(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
}

}  // namespace

FabricOpener::FabricOpener(std::shared_ptr<FabricEndpoint> endpoint, const DeviceContext& context)
    : ep_(std::move(endpoint)), context_(context) {}

void FabricOpener::start() {
  std::weak_ptr<FabricOpener> weak = weak_from_this();
  ep_->run([self = shared_from_this()] {
    for (size_t i = 0; i < kKnockReceives; ++i)
      self->receive(FI_ADDR_UNSPEC, fw::tag(fw::Kind::kKnock, 0), fw::kIgnoreAllButKind, kKnockRecv, 0,
                    [s = self.get()](const std::string& why) {
                      s->fail(unavailable_error("posting a knock receive failed: " + why));
                    });
  });
  ep_->set_tick([weak] {
    if (auto self = weak.lock()) self->expire_pending();
  });
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

void FabricOpener::post_or_later(std::function<ssize_t()> attempt, std::function<void(const std::string&)> failed) {
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
                              std::function<void(const std::string&)> failed) {
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

void FabricOpener::receive(fi_addr_t addr, uint64_t tag, uint64_t ignore, uint32_t kind, uint64_t arg,
                           std::function<void(const std::string&)> failed) {
  post_or_later(
      [this, addr, tag, ignore, kind, arg]() -> ssize_t {
        auto slot = ep_->take_slot();
        if (!slot.is_ok()) return -FI_ENOMEM;
        FabricOp* op = ep_->make_op(shared_from_this(), kind, arg, slot.value());
        const ssize_t rc = ep_->recv(op, addr, tag, ignore, slot.value().data, fw::kHeadBytes, slot.value().desc);
        if (rc != 0) ep_->give_back(slot.value());
        if (rc == 0 && kind == kHelloRecv) hello_receives_[static_cast<uint32_t>(arg)] = op;
        return rc;
      },
      std::move(failed));
}

Result<fi_addr_t> FabricOpener::hold_address(const std::string& address, bool of_the_job) {
  auto it = addresses_.find(address);
  if (it == addresses_.end()) {
    auto addr = ep_->insert_address(address);
    if (!addr.is_ok()) return addr.status();
    it = addresses_.emplace(address, KnownAddress{addr.value()}).first;
  }
  ++it->second.refs;
  it->second.of_the_job |= of_the_job;
  return it->second.addr;
}

void FabricOpener::release_address(const std::string& address) {
  auto it = addresses_.find(address);
  if (it == addresses_.end() || --it->second.refs > 0 || it->second.of_the_job) return;
  ep_->remove_address(it->second.addr);
  addresses_.erase(it);
}

// ---- The dialer's side.

void FabricOpener::start_dial(const HelloClaim& claim, int acceptor, const std::string& address) {
  const std::string link = "rank " + std::to_string(context_.rank) + " -> rank " + std::to_string(acceptor) + ": ";
  auto addr = hold_address(address, true);
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
  send_bytes(bytes_of_struct(knock), addr.value(), fw::tag(fw::Kind::kKnock, 0), kKnockSend, conn, failed);
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

// ---- The acceptor's side.

void FabricOpener::on_knock(FabricOp& op, size_t len) {
  fw::Knock knock{};
  std::memcpy(&knock, op.slot.data, std::min(len, sizeof(knock)));
  if (len != sizeof(knock) || knock.magic != wire::kMagic || knock.version != wire::kVersion)
    return reject("sent a knock that is not an omni-bench one (" + std::to_string(len) + " bytes)");
  if (knock.job_id != context_.job_id)
    return reject("knocked for job " + std::to_string(knock.job_id) + ", not this one (another job on the fabric?)");
  if (knock.address_len == 0 || knock.address_len > sizeof(knock.address))
    return reject("sent a knock with an address of " + std::to_string(knock.address_len) + " bytes");
  const std::string address(reinterpret_cast<const char*>(knock.address), knock.address_len);
  auto nonce = random_nonce();
  if (!nonce.is_ok()) return reject("could not be given a challenge (" + nonce.status().message() + ")");
  auto addr = hold_address(address, false);
  if (!addr.is_ok()) return reject("gave an address the provider cannot use");
  if (pending_order_.size() >= kMaxPendingHellos)
    reject_pending(pending_order_.front(), "was pushed out by newer knocks before it sent a hello");
  const uint32_t conn = new_conn();
  pending_[conn] = {address, addr.value(), nonce.value(), knock.dialer_conn, deadline_after(context_.timeout)};
  pending_order_.push_back(conn);
  receive(addr.value(), fw::tag(fw::Kind::kOpening, conn), 0, kHelloRecv, conn,
          [this, conn](const std::string& why) { reject_pending(conn, "could not be listened to: " + why); });
  fw::OpeningTrailer trailer{conn, 0};
  addresses_.at(address).refs++;  // the challenge send holds it too
  challenge_targets_[conn] = address;
  send_bytes(challenge_frame(context_.job_id, nonce.value()) + bytes_of_struct(trailer), addr.value(),
             fw::tag(fw::Kind::kOpening, knock.dialer_conn), kChallengeSend, conn, [this, conn](const std::string& why) {
               auto it = challenge_targets_.find(conn);
               if (it != challenge_targets_.end()) {
                 release_address(it->second);
                 challenge_targets_.erase(it);
               }
               reject_pending(conn, "could not be reached with its challenge: " + why);
             });
}

void FabricOpener::on_hello(FabricOp& op, size_t len) {
  const auto conn = static_cast<uint32_t>(op.arg);
  hello_receives_.erase(conn);
  auto it = pending_.find(conn);
  if (it == pending_.end()) return;
  if (len != fw::kHelloMessageBytes)
    return reject_pending(conn, "failed the hello: a message of " + std::to_string(len) + " bytes");
  wire::FrameHeader h;
  std::memcpy(&h, op.slot.data, sizeof(h));
  Status valid = check_opening_header(h, wire::FrameType::kHello, context_.job_id);
  if (!valid.is_ok()) return reject_pending(conn, "failed the hello: " + valid.message());
  wire::HelloPayload hello;
  std::memcpy(&hello, op.slot.data + sizeof(h), sizeof(hello));
  const HelloClaim claim{context_.job_id, h.tag, hello.rank, hello.link_id};
  if (!hello_proves_token(context_.token, claim, hello, context_.rank, it->second.nonce))
    return reject_pending(
        conn, "sent a hello that does not prove the job token (another job, or a different OMNIB_JOB_TOKEN?)");
  // A rank of this job: its address stays in the table.
  Pending p = it->second;
  pending_.erase(it);
  std::erase(pending_order_, conn);
  addresses_.at(p.address).of_the_job = true;
  release_address(p.address);
  const int dialer = static_cast<int>(hello.rank);
  const FabricPeer peer{p.addr, conn, p.dialer_conn, dialer};
  link_ready({false, claim, dialer, std::make_unique<FabricConnection>(ep_, peer, context_.job_id, context_.timeout)});
}

void FabricOpener::reject_pending(uint32_t conn, const std::string& why) {
  auto it = pending_.find(conn);
  if (it == pending_.end()) return;
  auto op = hello_receives_.find(conn);
  if (op != hello_receives_.end()) {
    ep_->cancel(op->second);
    hello_receives_.erase(op);
  }
  release_address(it->second.address);
  pending_.erase(it);
  std::erase(pending_order_, conn);
  reject(why);
}

void FabricOpener::expire_pending() {
  const auto now = SteadyClock::now();
  while (!pending_order_.empty()) {
    const uint32_t conn = pending_order_.front();
    if (pending_.at(conn).expires > now) return;
    reject_pending(conn, "sent no hello within the timeout");
  }
}

// ---- Completions.

void FabricOpener::on_done(FabricOp& op, size_t len, uint64_t tag) {
  switch (op.kind) {
    case kKnockRecv:
      on_knock(op, len);
      // The same slot waits for the next knock.
      receive(FI_ADDR_UNSPEC, fw::tag(fw::Kind::kKnock, 0), fw::kIgnoreAllButKind, kKnockRecv, 0,
              [this](const std::string& why) { fail(unavailable_error("posting a knock receive failed: " + why)); });
      break;
    case kChallengeRecv:
      on_challenge(op, len);
      break;
    case kHelloRecv:
      on_hello(op, len);
      break;
    case kChallengeSend: {
      auto it = challenge_targets_.find(static_cast<uint32_t>(op.arg));
      if (it != challenge_targets_.end()) {
        release_address(it->second);
        challenge_targets_.erase(it);
      }
      break;
    }
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
      receive(FI_ADDR_UNSPEC, fw::tag(fw::Kind::kKnock, 0), fw::kIgnoreAllButKind, kKnockRecv, 0,
              [this](const std::string& w) { fail(unavailable_error("posting a knock receive failed: " + w)); });
      break;
    case kHelloRecv:
      hello_receives_.erase(conn);
      if (!canceled) reject_pending(conn, "failed the hello: " + why);
      break;
    case kChallengeSend: {
      auto it = challenge_targets_.find(conn);
      if (it != challenge_targets_.end()) {
        release_address(it->second);
        challenge_targets_.erase(it);
      }
      reject_pending(conn, "could not be reached with its challenge: " + why);
      break;
    }
    case kChallengeRecv:
    case kKnockSend:
    case kHelloSend:
      if (!canceled) {
        auto it = dialing_.find(conn);
        const std::string peer = it != dialing_.end() ? "rank " + std::to_string(it->second.acceptor) : "a peer";
        fail(unavailable_error("rank " + std::to_string(context_.rank) + ": opening a link to " + peer +
                               " failed: " + why + " (is it running?)"));
      }
      break;
    default:
      break;
  }
}

}  // namespace omnib
