#include "engine/transport/link_factory.h"

#include <unistd.h>

#include <cstring>

#include "engine/transport/local_connection.h"
#include "engine/transport/tcp_connection.h"

namespace omnib {

void LinkSet::abort_all() {
  for (auto* ends : {&dialer_end, &acceptor_end})
    for (auto& c : *ends)
      if (c) c->abort();
}

ByteCounters LinkSet::wire_counters() const {
  ByteCounters total;
  for (const auto* ends : {&dialer_end, &acceptor_end})
    for (const auto& c : *ends)
      if (c && c->on_wire()) total += c->counters();
  return total;
}

Result<std::unique_ptr<LinkFactory>> LinkFactory::start(Store& store, int rank, int world, uint32_t job_id,
                                                        const std::string& bind_host,
                                                        std::chrono::milliseconds timeout) {
  auto fd = listen_on({bind_host, 0}, 1024);
  if (!fd.is_ok()) return fd.status().with_context("rank " + std::to_string(rank) + ": ");
  auto addr = local_address(fd.value());
  if (!addr.is_ok()) {
    close(fd.value());
    return addr.status();
  }
  std::unique_ptr<LinkFactory> f(new LinkFactory(store, rank, world, job_id, fd.value(), timeout));
  OMNIB_RETURN_IF_ERROR(store.set("addr/" + std::to_string(rank), addr.value().to_string()));
  return f;
}

LinkFactory::~LinkFactory() { close(listen_fd_); }

Result<LinkSet> LinkFactory::establish(const std::vector<LinkSpec>& specs) {
  const uint32_t plan = next_plan_++;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  LinkSet set;
  set.dialer_end.resize(specs.size());
  set.acceptor_end.resize(specs.size());
  size_t expected_incoming = 0;

  for (size_t id = 0; id < specs.size(); ++id) {
    const LinkSpec& s = specs[id];
    if (s.dialer == rank_ && s.acceptor == rank_) {
      auto [a, b] = LocalConnection::make_pair(rank_, timeout_);
      set.dialer_end[id] = std::move(a);
      set.acceptor_end[id] = std::move(b);
    } else if (s.acceptor == rank_) {
      ++expected_incoming;
    } else if (s.dialer == rank_) {
      auto it = peer_addresses_.find(s.acceptor);
      if (it == peer_addresses_.end()) {
        auto text = store_.get("addr/" + std::to_string(s.acceptor));
        if (!text.is_ok()) return text.status().with_context("looking up rank " + std::to_string(s.acceptor) + ": ");
        auto parsed = parse_socket_address(text.value());
        if (!parsed.is_ok()) return parsed.status();
        it = peer_addresses_.emplace(s.acceptor, parsed.value()).first;
      }
      auto fd = dial(it->second, deadline);
      if (!fd.is_ok())
        return fd.status().with_context("rank " + std::to_string(rank_) + " -> rank " + std::to_string(s.acceptor) + ": ");
      OMNIB_RETURN_IF_ERROR(configure_stream_socket(fd.value(), timeout_));
      auto conn = std::make_unique<TcpConnection>(fd.value(), s.acceptor, job_id_, timeout_);
      wire::HelloPayload hello{static_cast<uint32_t>(rank_), static_cast<uint32_t>(id)};
      OMNIB_RETURN_IF_ERROR(conn->send_bytes(wire::FrameType::kHello, plan, 0, &hello, sizeof(hello)));
      set.dialer_end[id] = std::move(conn);
    }
  }

  // Connections may have arrived while an earlier plan was being built.
  for (size_t id = 0; id < specs.size(); ++id) {
    auto it = early_arrivals_.find({plan, static_cast<uint32_t>(id)});
    if (it == early_arrivals_.end()) continue;
    set.acceptor_end[id] = std::move(it->second);
    early_arrivals_.erase(it);
    --expected_incoming;
  }

  Frame hello_frame;
  while (expected_incoming > 0) {
    auto fd = accept_before(listen_fd_, deadline);
    if (!fd.is_ok())
      return fd.status().with_context("rank " + std::to_string(rank_) + " waiting for " +
                                      std::to_string(expected_incoming) + " peer link(s): ");
    OMNIB_RETURN_IF_ERROR(configure_stream_socket(fd.value(), timeout_));
    // The hello is read here, on the blocking socket, before the link is
    // handed to a connection (and so to the network thread).
    const std::string who = "rank " + std::to_string(rank_) + ": new link";
    Status got = read_all(fd.value(), &hello_frame.header, sizeof(hello_frame.header), who);
    if (got.is_ok()) got = validate_header(hello_frame.header, job_id_, -1);
    wire::HelloPayload hello{};
    if (got.is_ok() && (hello_frame.type() != wire::FrameType::kHello || hello_frame.header.length != sizeof(hello)))
      got = unavailable_error("rank " + std::to_string(rank_) + ": first frame on a new link was not a hello");
    if (got.is_ok()) got = read_all(fd.value(), &hello, sizeof(hello), who);
    if (!got.is_ok()) {
      close(fd.value());
      return got;
    }
    uint32_t their_plan = hello_frame.header.tag;
    auto peer = static_cast<int>(hello.rank);
    auto conn = std::make_unique<TcpConnection>(fd.value(), peer, job_id_, timeout_);
    if (their_plan != plan) {
      early_arrivals_[{their_plan, hello.link_id}] = std::move(conn);
      continue;
    }
    if (hello.link_id >= specs.size() || specs[hello.link_id].acceptor != rank_ ||
        specs[hello.link_id].dialer != peer || set.acceptor_end[hello.link_id])
      return unavailable_error("rank " + std::to_string(rank_) + ": unexpected link " +
                               std::to_string(hello.link_id) + " from rank " + std::to_string(peer) +
                               " (ranks disagree on the algorithm list or node count?)");
    set.acceptor_end[hello.link_id] = std::move(conn);
    --expected_incoming;
  }
  return set;
}

}  // namespace omnib
