#include "tests/support/fabric_peer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <thread>

#include <rdma/fi_errno.h>

namespace omnib::testing {
namespace {

// Runs `fn` on `ep`'s progress thread and returns its result.
template <typename T>
T on_progress_thread(FabricEndpoint& ep, std::function<T()> fn) {
  std::promise<T> done;
  auto got = done.get_future();
  ep.run([&] { done.set_value(fn()); });
  return got.get();
}

// Owns one raw send until it completes.
class RawSend final : public FabricOpOwner {
 public:
  explicit RawSend(std::string bytes) : bytes_(std::move(bytes)) {}
  void on_done(FabricOp&, size_t, uint64_t) override { result_.set_value(true); }
  void on_failed(FabricOp&, bool, const std::string& why) override {
    ADD_FAILURE() << "raw send failed: " << why;
    result_.set_value(false);
  }
  void pump() override {}
  std::string bytes_;
  std::promise<bool> result_;
};

// Owns one raw receive until it completes (or the endpoint goes).
class RawReceive final : public FabricOpOwner {
 public:
  void on_done(FabricOp&, size_t len, uint64_t) override { result_.set_value(buffer_.substr(0, len)); }
  void on_failed(FabricOp&, bool, const std::string&) override { result_.set_value(std::nullopt); }
  void pump() override {}
  std::string buffer_ = std::string(4096, '\0');
  std::promise<std::optional<std::string>> result_;
};

}  // namespace

std::shared_ptr<FabricEndpoint> open_test_endpoint() {
  auto ep = FabricEndpoint::open(kTestProvider, "127.0.0.1");
  EXPECT_TRUE(ep.is_ok()) << ep.status().message();
  return ep.is_ok() ? ep.take() : nullptr;
}

fi_addr_t add_peer(FabricEndpoint& ep, const std::string& address) {
  return on_progress_thread<fi_addr_t>(ep, [&] {
    auto a = ep.insert_address(address);
    EXPECT_TRUE(a.is_ok()) << a.status().message();
    return a.is_ok() ? a.value() : FI_ADDR_UNSPEC;
  });
}

std::optional<std::string> receive_raw_fabric(FabricEndpoint& ep, fi_addr_t from, uint64_t tag,
                                              std::chrono::milliseconds limit) {
  auto owner = std::make_shared<RawReceive>();
  auto got = owner->result_.get_future();
  FabricOp* posted = nullptr;
  const ssize_t rc = on_progress_thread<ssize_t>(ep, [&] {
    posted = ep.make_op(owner, 0, 0);
    return ep.recv(posted, from, tag, 0, owner->buffer_.data(), owner->buffer_.size(), nullptr);
  });
  EXPECT_EQ(rc, 0) << ep.error_text(rc);
  if (rc != 0) return std::nullopt;
  if (got.wait_for(limit) == std::future_status::ready) return got.get();
  on_progress_thread<bool>(ep, [&] {
    ep.cancel(posted);
    return true;
  });
  return std::nullopt;
}

FabricPair::~FabricPair() {
  a.reset();
  b.reset();
  if (ep_a) ep_a->shutdown();
  if (ep_b) ep_b->shutdown();
}

std::unique_ptr<FabricPair> make_fabric_pair(uint32_t job_a, uint32_t job_b, std::chrono::milliseconds timeout,
                                             bool local_registration, bool with_b) {
  auto p = std::make_unique<FabricPair>();
  p->ep_a = open_test_endpoint();
  p->ep_b = open_test_endpoint();
  if (!p->ep_a || !p->ep_b) return p;
  if (local_registration) {
    p->ep_a->force_local_registration();
    p->ep_b->force_local_registration();
  }
  p->a_to_b = add_peer(*p->ep_a, p->ep_b->address());
  p->b_to_a = add_peer(*p->ep_b, p->ep_a->address());
  p->a = std::make_unique<FabricConnection>(p->ep_a, FabricPeer{p->a_to_b, FabricPair::kConnA, FabricPair::kConnB, 1},
                                            job_a, timeout);
  if (with_b)
    p->b = std::make_unique<FabricConnection>(p->ep_b, FabricPeer{p->b_to_a, FabricPair::kConnB, FabricPair::kConnA, 0},
                                            job_b, timeout);
  return p;
}

bool send_raw_fabric(FabricEndpoint& ep, fi_addr_t to, uint64_t tag, const std::string& bytes) {
  auto owner = std::make_shared<RawSend>(bytes);
  auto sent = owner->result_.get_future();
  // The first send to a peer waits (-FI_EAGAIN) until the provider has connected to it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  ssize_t rc = -FI_EAGAIN;
  while (rc == -FI_EAGAIN && std::chrono::steady_clock::now() < deadline) {
    rc = on_progress_thread<ssize_t>(ep, [&] {
      FabricOp* op = ep.make_op(owner, 0, 0);
      iovec iov{owner->bytes_.data(), owner->bytes_.size()};
      void* desc = nullptr;
      return ep.send(op, to, tag, &iov, &desc, 1);
    });
    if (rc == -FI_EAGAIN) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(rc, 0) << ep.error_text(rc);
  if (rc != 0) return false;
  return sent.wait_for(std::chrono::seconds(10)) == std::future_status::ready && sent.get();
}

}  // namespace omnib::testing
