// The Store every rank uses: a client of TcpStoreServer over one TCP
// connection that has proved the job token (store_protocol.h).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "engine/auth/job_token.h"
#include "engine/store/store.h"
#include "engine/bootstrap/store_protocol.h"
#include "engine/sockets/socket_util.h"

namespace omnib {

class TcpStoreClient final : public Store {
 public:
  // Connects and runs the handshake, retrying refused connections until
  // `timeout` passes (the server may start later). `timeout` also bounds
  // every later call (Store's contract). kUnavailable when the server or
  // this client fails the other's proof (different tokens).
  static Result<std::unique_ptr<TcpStoreClient>> connect(const SocketAddress& server, const JobToken& token,
                                                         std::chrono::milliseconds timeout);
  ~TcpStoreClient() override;

  Status set(const std::string& key, const std::string& value) override;
  Result<std::string> get(const std::string& key) override;
  Status barrier(const std::string& name, int world) override;
  Result<std::vector<std::string>> gather(const std::string& name, int rank, int world, const std::string& mine,
                                          GatherTo to) override;
  Status post_abort(int rank, const std::string& message) override;
  std::chrono::milliseconds timeout() const override { return timeout_; }

 private:
  TcpStoreClient(int fd, SocketAddress server, const JobToken& token, std::chrono::milliseconds timeout)
      : fd_(fd), server_(std::move(server)), token_(token), timeout_(timeout) {}
  // One request and its reply, all before `deadline`. After a failure in the
  // middle the connection is dropped; the next call opens a new one.
  Result<std::string> call(store_wire::StoreRequest req, const std::string& key, const std::string& value,
                           SteadyClock::time_point deadline);
  Result<std::string> call_locked(store_wire::StoreRequest req, const std::string& key, const std::string& value,
                                  SteadyClock::time_point deadline, const std::string& what);

  int fd_;  // -1 after a failed call
  SocketAddress server_;
  JobToken token_;
  std::chrono::milliseconds timeout_;
  std::timed_mutex mu_;  // one request in flight at a time
};

}  // namespace omnib
