#include "engine/bootstrap/tcp_store_client.h"

#include <unistd.h>

#include <cstring>

namespace omnib {
namespace {

using store_wire::Op;
using store_wire::ReplyStatus;
using store_wire::StoreReply;
using store_wire::StoreRequest;
using store_wire::make_request;

// A failing rank should not linger: the store may be gone with rank 0.
constexpr auto kAbortPostLimit = std::chrono::milliseconds(1000);
constexpr size_t kMaxAbortMessage = 4000;

std::string where(const SocketAddress& server) { return "rendezvous store at " + server.to_string(); }

// Dials the server and proves the token both ways. Returns the fd.
Result<int> open_connection(const SocketAddress& server, const JobToken& token, SteadyClock::time_point deadline) {
  const std::string what = where(server);
  auto fd = dial(server, deadline);
  if (!fd.is_ok()) return fd.status().with_context(what + ": ");
  (void)configure_stream_socket(fd.value());
  auto handshake = [&]() -> Status {
    store_wire::StoreGreeting greeting{};
    OMNIB_RETURN_IF_ERROR(read_all(fd.value(), &greeting, sizeof(greeting), deadline, what + " (greeting)"));
    if (greeting.magic != store_wire::kMagic || greeting.version != store_wire::kVersion)
      return unavailable_error(what + " is not an omni-bench store of this version (magic " +
                               std::to_string(greeting.magic) + ", version " + std::to_string(greeting.version) +
                               "); run the same omni-bench build on every rank");
    auto nonce = random_nonce();
    if (!nonce.is_ok()) return nonce.status();
    store_wire::StoreClientProof proof{nonce.value(), {}};
    proof.mac = token.prove(store_wire::kClientLabel, {bytes_of(greeting.nonce), bytes_of(proof.nonce)});
    OMNIB_RETURN_IF_ERROR(write_all(fd.value(), &proof, sizeof(proof), deadline, what + " (handshake)"));
    store_wire::StoreServerProof answer{};
    Status got = read_all(fd.value(), &answer, sizeof(answer), deadline, what + " (handshake)");
    if (got.code() == Code::kUnavailable)
      return unavailable_error(what + " refused this rank's proof of the job token: give every rank the same "
                               "OMNIB_JOB_TOKEN (or none)");
    OMNIB_RETURN_IF_ERROR(got);
    if (!token.verify(answer.mac, store_wire::kServerLabel, {bytes_of(greeting.nonce), bytes_of(proof.nonce)}))
      return unavailable_error(what + " does not hold this job's token: is another job or program on that port, or "
                               "do the ranks have different OMNIB_JOB_TOKEN values?");
    return Status::ok();
  };
  Status s = handshake();
  if (!s.is_ok()) {
    close(fd.value());
    return s;
  }
  return fd.value();
}

// Sends one request on `fd` and reads its reply, all before `deadline`.
// `intact` says whether the connection can carry another request.
Result<std::string> exchange(int fd, StoreRequest req, const std::string& key, const std::string& value,
                             SteadyClock::time_point deadline, const std::string& what, bool& intact) {
  intact = false;
  req.key_len = static_cast<uint32_t>(key.size());
  req.value_len = value.size();
  std::string message(sizeof(req), '\0');
  std::memcpy(message.data(), &req, sizeof(req));
  message += key;
  message += value;
  OMNIB_RETURN_IF_ERROR(write_all(fd, message.data(), message.size(), deadline, what));
  StoreReply reply{};
  OMNIB_RETURN_IF_ERROR(read_all(fd, &reply, sizeof(reply), deadline, what));
  if (reply.magic != store_wire::kReplyMagic || reply.status > static_cast<uint8_t>(ReplyStatus::kRefused) ||
      reply.length > StoreLimits{}.max_buffered_bytes)
    return unavailable_error(what + ": malformed reply");
  std::string payload(reply.length, '\0');
  if (reply.length) OMNIB_RETURN_IF_ERROR(read_all(fd, payload.data(), payload.size(), deadline, what));
  intact = true;
  switch (static_cast<ReplyStatus>(reply.status)) {
    case ReplyStatus::kOk:
      return payload;
    case ReplyStatus::kAborted:
      return unavailable_error("the job was stopped: " + payload);
    default:
      return usage_error(what + " was refused: " + payload);
  }
}

std::string describe(const StoreRequest& req, const std::string& key) {
  switch (static_cast<Op>(req.op)) {
    case Op::kSet: return "set '" + key + "'";
    case Op::kGet: return "get '" + key + "'";
    case Op::kBarrier: return "barrier '" + key + "'";
    case Op::kGather: return "gather '" + key + "'";
    default: return "abort";
  }
}

}  // namespace

Result<std::unique_ptr<TcpStoreClient>> TcpStoreClient::connect(const SocketAddress& server, const JobToken& token,
                                                                 std::chrono::milliseconds timeout) {
  auto fd = open_connection(server, token, deadline_after(timeout));
  if (!fd.is_ok()) return fd.status();
  return std::unique_ptr<TcpStoreClient>(new TcpStoreClient(fd.value(), server, token, timeout));
}

TcpStoreClient::~TcpStoreClient() {
  if (fd_ >= 0) close(fd_);
}

Result<std::string> TcpStoreClient::call(StoreRequest req, const std::string& key, const std::string& value,
                                         SteadyClock::time_point deadline) {
  const std::string what = where(server_) + " (" + describe(req, key) + ")";
  const StoreLimits limits;
  if (key.size() > limits.max_key_bytes || value.size() > limits.max_value_bytes)
    return usage_error(what + ": the key (" + std::to_string(key.size()) + " bytes) or value (" +
                       std::to_string(value.size()) + " bytes) is over the store's limit of " +
                       std::to_string(limits.max_key_bytes) + " and " + std::to_string(limits.max_value_bytes));
  std::unique_lock lock(mu_, std::defer_lock);
  if (!lock.try_lock_until(deadline)) return timeout_error(what + ": another call held the store past the timeout");
  return call_locked(req, key, value, deadline, what);
}

Result<std::string> TcpStoreClient::call_locked(StoreRequest req, const std::string& key, const std::string& value,
                                                SteadyClock::time_point deadline, const std::string& what) {
  if (fd_ < 0) {
    auto fd = open_connection(server_, token_, deadline);
    if (!fd.is_ok()) return fd.status();
    fd_ = fd.value();
  }
  bool intact = false;
  auto reply = exchange(fd_, req, key, value, deadline, what, intact);
  if (!intact) {
    // Half a reply, or a wait the server still holds: drop the connection;
    // a later call opens a new one.
    close(fd_);
    fd_ = -1;
  }
  return reply;
}

Status TcpStoreClient::set(const std::string& key, const std::string& value) {
  return call(make_request(Op::kSet), key, value, deadline_after(timeout_)).status();
}

Result<std::string> TcpStoreClient::get(const std::string& key) {
  return call(make_request(Op::kGet), key, "", deadline_after(timeout_));
}

Status TcpStoreClient::barrier(const std::string& name, int world) {
  return call(make_request(Op::kBarrier, 0, static_cast<uint32_t>(world)), name, "", deadline_after(timeout_)).status();
}

Result<std::vector<std::string>> TcpStoreClient::gather(const std::string& name, int rank, int world,
                                                        const std::string& mine, GatherTo to) {
  const uint8_t flags = to == GatherTo::kEveryone ? store_wire::kEveryone : store_wire::kToRoot;
  auto reply = call(make_request(Op::kGather, static_cast<uint32_t>(rank), static_cast<uint32_t>(world), flags), name, mine,
                    deadline_after(timeout_));
  if (!reply.is_ok()) return reply.status();
  if (to == GatherTo::kRoot && rank != 0) return std::vector<std::string>{};
  auto parts = store_wire::decode_parts(reply.value(), world);
  if (!parts.is_ok()) return parts.status().with_context(where(server_) + " (gather '" + name + "'): ");
  return parts;
}

Status TcpStoreClient::post_abort(int rank, const std::string& message) {
  const auto deadline = deadline_after(std::min(timeout_, kAbortPostLimit));
  const StoreRequest req = make_request(Op::kAbort, static_cast<uint32_t>(rank));
  const std::string text = message.substr(0, kMaxAbortMessage);
  const std::string what = where(server_) + " (abort)";
  std::unique_lock lock(mu_, std::try_to_lock);
  if (lock.owns_lock()) return call_locked(req, "", text, deadline, what).status();
  // Another thread is waiting on our connection: post on a fresh one.
  auto fd = open_connection(server_, token_, deadline);
  if (!fd.is_ok()) return fd.status();
  bool intact = false;
  Status s = exchange(fd.value(), req, "", text, deadline, what, intact).status();
  close(fd.value());
  return s;
}

}  // namespace omnib
