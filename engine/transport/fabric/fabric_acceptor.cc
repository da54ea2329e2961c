#include "engine/transport/fabric/fabric_acceptor.h"

#include <algorithm>
#include <cstring>

#include "engine/transport/fabric/fabric_connection.h"
#include "engine/transport/fabric/fabric_opener.h"
#include "engine/transport/fabric/fabric_wire.h"

namespace omnib {

namespace fw = fabric_wire;

void FabricAcceptor::on_knock(FabricOp& op, size_t len) {
  fw::Knock knock{};
  std::memcpy(&knock, op.slot.data, std::min(len, sizeof(knock)));
  if (len != sizeof(knock) || knock.magic != wire::kMagic || knock.version != wire::kVersion)
    return opener_.reject("sent a knock that is not an omni-bench one (" + std::to_string(len) + " bytes)");
  if (knock.job_id != opener_.context().job_id)
    return opener_.reject("knocked for job " + std::to_string(knock.job_id) +
                          ", not this one (another job on the fabric?)");
  if (knock.address_len == 0 || knock.address_len > sizeof(knock.address))
    return opener_.reject("sent a knock with an address of " + std::to_string(knock.address_len) + " bytes");
  const std::string address(reinterpret_cast<const char*>(knock.address), knock.address_len);
  auto nonce = random_nonce();
  if (!nonce.is_ok()) return opener_.reject("could not be given a challenge (" + nonce.status().message() + ")");
  auto addr = opener_.addresses().hold(address, false);
  if (!addr.is_ok()) return opener_.reject("gave an address the provider cannot use");
  challenge(address, addr.value(), knock.dialer_conn, nonce.value());
}

void FabricAcceptor::challenge(const std::string& address, fi_addr_t addr, uint32_t dialer_conn, const Nonce& nonce) {
  if (pending_order_.size() >= kMaxPendingHellos)
    reject_pending(pending_order_.front(), "was pushed out by newer knocks before it sent a hello");
  const uint32_t conn = opener_.new_conn();
  pending_[conn] = {address, addr, nonce, dialer_conn, deadline_after(opener_.context().timeout)};
  pending_order_.push_back(conn);
  opener_.receive(
      addr, fw::tag(fw::Kind::kOpening, conn), 0, FabricOpener::kHelloRecv, conn,
      [this, conn](const std::string& why) { reject_pending(conn, "could not be listened to: " + why); },
      [this, conn](FabricOp* op) { hello_receives_[conn] = op; });
  const fw::OpeningTrailer trailer{conn, 0};
  opener_.addresses().hold_again(address);  // the challenge send holds it too
  challenge_targets_[conn] = address;
  const std::string message = challenge_frame(opener_.context().job_id, nonce) +
                              std::string(reinterpret_cast<const char*>(&trailer), sizeof(trailer));
  opener_.send_bytes(message, addr, fw::tag(fw::Kind::kOpening, dialer_conn), FabricOpener::kChallengeSend, conn,
                     [this, conn](const std::string& why) { challenge_failed(conn, why); });
}

void FabricAcceptor::on_hello(FabricOp& op, size_t len) {
  const auto conn = static_cast<uint32_t>(op.arg);
  hello_receives_.erase(conn);
  auto it = pending_.find(conn);
  if (it == pending_.end()) return;
  if (len != fw::kHelloMessageBytes)
    return reject_pending(conn, "failed the hello: a message of " + std::to_string(len) + " bytes");
  const DeviceContext& context = opener_.context();
  wire::FrameHeader h;
  std::memcpy(&h, op.slot.data, sizeof(h));
  Status valid = check_opening_header(h, wire::FrameType::kHello, context.job_id);
  if (!valid.is_ok()) return reject_pending(conn, "failed the hello: " + valid.message());
  wire::HelloPayload hello;
  std::memcpy(&hello, op.slot.data + sizeof(h), sizeof(hello));
  const HelloClaim claim{context.job_id, h.tag, hello.rank, hello.link_id};
  if (!hello_proves_token(context.token, claim, hello, context.rank, it->second.nonce))
    return reject_pending(
        conn, "sent a hello that does not prove the job token (another job, or a different OMNIB_JOB_TOKEN?)");
  // A rank of this job: its address stays in the table.
  const Pending p = it->second;
  pending_.erase(it);
  std::erase(pending_order_, conn);
  opener_.addresses().keep(p.address);
  opener_.addresses().release(p.address);
  const int dialer = static_cast<int>(hello.rank);
  const FabricPeer peer{p.addr, conn, p.dialer_conn, dialer};
  opener_.link_ready({false, claim, dialer,
                      std::make_unique<FabricConnection>(opener_.endpoint(), peer, context.job_id, context.timeout)});
}

void FabricAcceptor::hello_failed(uint32_t conn, bool canceled, const std::string& why) {
  hello_receives_.erase(conn);
  if (!canceled) reject_pending(conn, "failed the hello: " + why);
}

void FabricAcceptor::challenge_sent(uint32_t conn) {
  auto it = challenge_targets_.find(conn);
  if (it == challenge_targets_.end()) return;
  opener_.addresses().release(it->second);
  challenge_targets_.erase(it);
}

void FabricAcceptor::challenge_failed(uint32_t conn, const std::string& why) {
  challenge_sent(conn);
  reject_pending(conn, "could not be reached with its challenge: " + why);
}

void FabricAcceptor::reject_pending(uint32_t conn, const std::string& why) {
  auto it = pending_.find(conn);
  if (it == pending_.end()) return;
  auto op = hello_receives_.find(conn);
  if (op != hello_receives_.end()) {
    opener_.endpoint()->cancel(op->second);
    hello_receives_.erase(op);
  }
  opener_.addresses().release(it->second.address);
  pending_.erase(it);
  std::erase(pending_order_, conn);
  opener_.reject(why);
}

void FabricAcceptor::expire_pending() {
  const auto now = SteadyClock::now();
  while (!pending_order_.empty()) {
    const uint32_t conn = pending_order_.front();
    if (pending_.at(conn).expires > now) return;
    reject_pending(conn, "sent no hello within the timeout");
  }
}

}  // namespace omnib
