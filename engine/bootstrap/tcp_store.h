// A Store served over TCP: one server (the local launcher, or rank 0 under an
// external launcher) and a client per rank. Protocol: docs/wire-format.md.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/bootstrap/store.h"
#include "engine/transport/socket_util.h"

namespace omnib {

class TcpStoreServer {
 public:
  // Listens on `where` (port 0 picks one); serves until destroyed.
  static Result<std::unique_ptr<TcpStoreServer>> start(const SocketAddress& where);
  ~TcpStoreServer();
  SocketAddress address() const { return address_; }

 private:
  TcpStoreServer(int fd, SocketAddress address);
  void accept_loop();
  void serve(int fd);

  int listen_fd_;
  SocketAddress address_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> data_;
  std::vector<int> client_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

class TcpStoreClient final : public Store {
 public:
  // Connects, retrying until `timeout` passes (the server may start later).
  static Result<std::unique_ptr<TcpStoreClient>> connect(const SocketAddress& server,
                                                         std::chrono::milliseconds timeout);
  ~TcpStoreClient() override;

  Status set(const std::string& key, const std::string& value) override;
  Result<std::string> get(const std::string& key) override;
  Result<int64_t> add(const std::string& key, int64_t delta) override;

 private:
  explicit TcpStoreClient(int fd, SocketAddress server) : fd_(fd), server_(std::move(server)) {}
  Result<std::string> call(uint8_t op, const std::string& key, const std::string& value);

  int fd_;
  SocketAddress server_;
  std::mutex mu_;  // one request in flight at a time
};

}  // namespace omnib
