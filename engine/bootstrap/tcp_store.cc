#include "engine/bootstrap/tcp_store.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace omnib {
namespace {

enum Op : uint8_t { kSet = 1, kGet = 2, kAdd = 3 };
constexpr uint32_t kStoreMagic = 0x53424d4f;  // "OMBS"
constexpr uint64_t kMaxValue = 64u << 20;

struct Request {
  uint32_t magic;
  uint8_t op;
  uint8_t pad[3];
  uint32_t key_len;
  uint64_t value_len;
};

Status read_string(int fd, std::string& out, uint64_t n, const std::string& what) {
  out.resize(n);
  return n ? read_all(fd, out.data(), n, what) : Status::ok();
}

}  // namespace

Result<std::unique_ptr<TcpStoreServer>> TcpStoreServer::start(const SocketAddress& where) {
  auto fd = listen_on(where);
  if (!fd.is_ok()) return fd.status().with_context("rendezvous store: ");
  auto addr = local_address(fd.value());
  if (!addr.is_ok()) {
    close(fd.value());
    return addr.status();
  }
  return std::unique_ptr<TcpStoreServer>(new TcpStoreServer(fd.value(), addr.value()));
}

TcpStoreServer::TcpStoreServer(int fd, SocketAddress address) : listen_fd_(fd), address_(std::move(address)) {
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpStoreServer::~TcpStoreServer() {
  stopping_ = true;
  {
    std::lock_guard lock(mu_);
    for (int fd : client_fds_) shutdown(fd, SHUT_RDWR);
    cv_.notify_all();
  }
  acceptor_.join();
  for (auto& t : threads_) t.join();
  for (int fd : client_fds_) close(fd);
  close(listen_fd_);
}

void TcpStoreServer::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mu_);
    if (stopping_) {
      close(fd);
      break;
    }
    // No timeouts here (a get may legitimately wait long), but no Nagle
    // delay either: barriers depend on prompt replies.
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    client_fds_.push_back(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void TcpStoreServer::serve(int fd) {
  const std::string what = "rendezvous store client";
  while (!stopping_) {
    Request req{};
    if (!read_all(fd, &req, sizeof(req), what).is_ok()) return;
    if (req.magic != kStoreMagic || req.key_len > 4096 || req.value_len > kMaxValue) return;
    std::string key, value;
    if (!read_string(fd, key, req.key_len, what).is_ok() || !read_string(fd, value, req.value_len, what).is_ok())
      return;
    std::string reply;
    {
      std::unique_lock lock(mu_);
      if (req.op == kSet) {
        data_[key] = value;
        cv_.notify_all();
      } else if (req.op == kGet) {
        cv_.wait(lock, [&] { return stopping_ || data_.count(key) > 0; });
        if (stopping_) return;
        reply = data_[key];
      } else if (req.op == kAdd) {
        int64_t delta = 0;
        std::memcpy(&delta, value.data(), std::min(value.size(), sizeof(delta)));
        int64_t current = 0;
        auto it = data_.find(key);
        if (it != data_.end()) std::memcpy(&current, it->second.data(), sizeof(current));
        current += delta;
        std::string stored(sizeof(current), '\0');
        std::memcpy(stored.data(), &current, sizeof(current));
        data_[key] = stored;
        reply = stored;
        cv_.notify_all();
      } else {
        return;
      }
    }
    // Length and value in one write.
    std::string message(sizeof(uint64_t), '\0');
    uint64_t len = reply.size();
    std::memcpy(message.data(), &len, sizeof(len));
    message += reply;
    if (!write_all(fd, message.data(), message.size(), what).is_ok()) return;
  }
}

Result<std::unique_ptr<TcpStoreClient>> TcpStoreClient::connect(const SocketAddress& server,
                                                                 std::chrono::milliseconds timeout) {
  auto fd = dial(server, std::chrono::steady_clock::now() + timeout);
  if (!fd.is_ok()) return fd.status().with_context("rendezvous store at " + server.to_string() + ": ");
  OMNIB_RETURN_IF_ERROR(configure_stream_socket(fd.value(), timeout));
  return std::unique_ptr<TcpStoreClient>(new TcpStoreClient(fd.value(), server));
}

TcpStoreClient::~TcpStoreClient() { close(fd_); }

Result<std::string> TcpStoreClient::call(uint8_t op, const std::string& key, const std::string& value) {
  std::lock_guard lock(mu_);
  const std::string what = "rendezvous store at " + server_.to_string() + " (key '" + key + "')";
  Request req{};
  req.magic = kStoreMagic;
  req.op = op;
  req.key_len = static_cast<uint32_t>(key.size());
  req.value_len = value.size();
  std::string message(sizeof(req), '\0');
  std::memcpy(message.data(), &req, sizeof(req));
  message += key;
  message += value;
  OMNIB_RETURN_IF_ERROR(write_all(fd_, message.data(), message.size(), what));
  uint64_t len = 0;
  OMNIB_RETURN_IF_ERROR(read_all(fd_, &len, sizeof(len), what));
  if (len > kMaxValue) return unavailable_error(what + ": oversized reply");
  std::string reply;
  OMNIB_RETURN_IF_ERROR(read_string(fd_, reply, len, what));
  return reply;
}

Status TcpStoreClient::set(const std::string& key, const std::string& value) {
  return call(kSet, key, value).status();
}

Result<std::string> TcpStoreClient::get(const std::string& key) { return call(kGet, key, ""); }

Result<int64_t> TcpStoreClient::add(const std::string& key, int64_t delta) {
  std::string v(sizeof(delta), '\0');
  std::memcpy(v.data(), &delta, sizeof(delta));
  auto r = call(kAdd, key, v);
  if (!r.is_ok()) return r.status();
  int64_t out = 0;
  std::memcpy(&out, r.value().data(), std::min(r.value().size(), sizeof(out)));
  return out;
}

}  // namespace omnib
