#include "engine/transport/link_factory.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
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
                                                        const JobToken& token, const std::string& bind_host,
                                                        std::chrono::milliseconds timeout) {
  auto fd = listen_on({bind_host, 0}, 1024);
  if (!fd.is_ok()) return fd.status().with_context("rank " + std::to_string(rank) + ": ");
  auto addr = local_address(fd.value());
  if (!addr.is_ok()) {
    close(fd.value());
    return addr.status();
  }
  std::unique_ptr<LinkFactory> f(new LinkFactory(store, rank, world, job_id, token, fd.value(), timeout));
  OMNIB_RETURN_IF_ERROR(store.set("addr/" + std::to_string(rank), addr.value().to_string()));
  return f;
}

LinkFactory::~LinkFactory() {
  for (const auto& p : pending_) close(p.fd);
  close(listen_fd_);
}

// One establish() call: the plan's links and what is still missing.
struct LinkFactory::Plan {
  uint32_t number;
  const std::vector<LinkSpec>& specs;
  LinkSet set;
  size_t expected_incoming = 0;
};

namespace {

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

int poll_ms_until(SteadyClock::time_point t) {
  const auto now = SteadyClock::now();
  if (t <= now) return 0;
  return static_cast<int>(std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(t - now).count(), 1000));
}

}  // namespace

Result<LinkSet> LinkFactory::establish(const std::vector<LinkSpec>& specs) {
  Plan plan{next_plan_++, specs, {}, 0};
  const auto deadline = deadline_after(timeout_);
  plan.set.dialer_end.resize(specs.size());
  plan.set.acceptor_end.resize(specs.size());
  std::vector<Outgoing> outgoing;
  // Dialed sockets not yet handed to a TcpConnection are closed on every exit.
  struct CloseLeftovers {
    std::vector<Outgoing>& out;
    ~CloseLeftovers() {
      for (const auto& o : out)
        if (o.fd >= 0) close(o.fd);
    }
  } close_leftovers{outgoing};

  for (size_t id = 0; id < specs.size(); ++id) {
    const LinkSpec& s = specs[id];
    if (s.dialer == rank_ && s.acceptor == rank_) {
      auto [a, b] = LocalConnection::make_pair(rank_, timeout_);
      plan.set.dialer_end[id] = std::move(a);
      plan.set.acceptor_end[id] = std::move(b);
    } else if (s.acceptor == rank_) {
      ++plan.expected_incoming;
    } else if (s.dialer == rank_) {
      // Connecting needs only the peer's listener, which exists from start().
      auto fd = dial_peer(s.acceptor, deadline);
      if (!fd.is_ok())
        return fd.status().with_context("rank " + std::to_string(rank_) + " -> rank " + std::to_string(s.acceptor) + ": ");
      outgoing.push_back({id, s.acceptor, fd.value(), OpeningFrameReader(wire::FrameType::kChallenge, job_id_)});
    }
  }

  // Connections may have arrived while an earlier plan was being built.
  for (size_t id = 0; id < specs.size(); ++id) {
    auto it = early_arrivals_.find({plan.number, static_cast<uint32_t>(id)});
    if (it == early_arrivals_.end()) continue;
    EarlyArrival early = std::move(it->second);
    early_arrivals_.erase(it);
    OMNIB_RETURN_IF_ERROR(take(plan, static_cast<uint32_t>(id), early.dialer, std::move(early.conn)));
  }

  // Challenges to answer, hellos to read and strangers to turn away, all at once.
  auto listen_paused_until = SteadyClock::time_point::min();
  while (!outgoing.empty() || plan.expected_incoming > 0) {
    const auto now = SteadyClock::now();
    if (now >= deadline) {
      std::vector<int> from, to;
      for (size_t id = 0; id < specs.size(); ++id)
        if (specs[id].acceptor == rank_ && !plan.set.acceptor_end[id]) from.push_back(specs[id].dialer);
      for (const auto& o : outgoing) to.push_back(o.peer);
      return timeout_error("rank " + std::to_string(rank_) + " timed out setting up its links" +
                           (from.empty() ? "" : "; no hello from rank(s) " + rank_list(from)) +
                           (to.empty() ? "" : "; no challenge from rank(s) " + rank_list(to)) +
                           " (is a peer dead or stuck?)");
    }
    auto wake = deadline;
    for (const auto& p : pending_) wake = std::min(wake, p.expires);
    const bool listening = now >= listen_paused_until;
    if (!listening) wake = std::min(wake, listen_paused_until);

    std::vector<pollfd> fds;
    fds.push_back({listening ? listen_fd_ : -1, POLLIN, 0});
    for (const auto& o : outgoing) fds.push_back({o.fd, POLLIN, 0});
    for (const auto& p : pending_) fds.push_back({p.fd, POLLIN, 0});
    int rc = poll(fds.data(), fds.size(), poll_ms_until(wake));
    if (rc < 0 && errno != EINTR) return unavailable_error(std::string("poll on link sockets: ") + std::strerror(errno));
    if (rc <= 0) fds.assign(fds.size(), pollfd{-1, 0, 0});

    // Pending hellos first (their indices shift once outgoing links finish).
    const size_t first_pending = 1 + outgoing.size();
    for (size_t i = pending_.size(); i-- > 0;) {
      PendingHello& p = pending_[i];
      bool finished = false;  // its descriptor is closed or handed on
      Status read = Status::ok();
      if (fds[first_pending + i].revents) {
        read = read_hello(p, plan, finished);
      } else if (SteadyClock::now() >= p.expires) {
        reject(p.fd, "sent no hello within the timeout");
        finished = true;
      }
      if (finished) pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      OMNIB_RETURN_IF_ERROR(read);
    }
    for (size_t i = outgoing.size(); i-- > 0;) {
      if (!fds[1 + i].revents) continue;
      OMNIB_RETURN_IF_ERROR(answer_challenge(outgoing[i], plan));
      if (outgoing[i].fd < 0) outgoing.erase(outgoing.begin() + static_cast<std::ptrdiff_t>(i));
    }
    // Out of descriptors, a readable listener would wake us at once: look again shortly.
    if (fds[0].revents && !accept_pending()) listen_paused_until = SteadyClock::now() + std::chrono::milliseconds(50);
  }
  return std::move(plan.set);
}

Result<int> LinkFactory::dial_peer(int acceptor, SteadyClock::time_point deadline) {
  auto it = peer_addresses_.find(acceptor);
  if (it == peer_addresses_.end()) {
    auto text = store_.get("addr/" + std::to_string(acceptor));
    if (!text.is_ok()) return text.status().with_context("looking up rank " + std::to_string(acceptor) + ": ");
    auto parsed = parse_socket_address(text.value());
    if (!parsed.is_ok()) return parsed.status().with_context("the store's addr/" + std::to_string(acceptor) + ": ");
    it = peer_addresses_.emplace(acceptor, parsed.value()).first;
  }
  auto fd = dial(it->second, deadline);
  if (!fd.is_ok()) return fd.status();
  (void)configure_stream_socket(fd.value());
  return fd.value();
}

bool LinkFactory::accept_pending() {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;
    }
    (void)configure_stream_socket(fd);
    auto nonce = random_nonce();
    if (!nonce.is_ok()) {
      reject(fd, "could not be given a challenge (" + nonce.status().message() + ")");
      continue;
    }
    // A fresh socket's send buffer is empty: the 48 bytes go out at once or never.
    const std::string challenge = challenge_frame(job_id_, nonce.value());
    if (::send(fd, challenge.data(), challenge.size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
        static_cast<ssize_t>(challenge.size())) {
      reject(fd, "closed before it got its challenge");
      continue;
    }
    if (pending_.size() >= kMaxPendingHellos) {
      reject(pending_.front().fd, "was pushed out by newer connections before it sent a hello");
      pending_.pop_front();
    }
    pending_.push_back({fd, nonce.value(), OpeningFrameReader(wire::FrameType::kHello, job_id_),
                        deadline_after(timeout_)});
  }
}

Status LinkFactory::answer_challenge(Outgoing& out, Plan& plan) {
  const std::string link = "rank " + std::to_string(rank_) + " -> rank " + std::to_string(out.peer) + ": ";
  Status got = out.reader.read_available(out.fd);
  if (!got.is_ok()) return got.with_context(link + "the peer's challenge: ");
  if (!out.reader.done()) return Status::ok();
  Nonce nonce{};
  std::memcpy(nonce.data(), out.reader.challenge().nonce, nonce.size());
  const HelloClaim claim{job_id_, plan.number, static_cast<uint32_t>(rank_), static_cast<uint32_t>(out.link_id)};
  const std::string hello = hello_frame(token_, claim, out.peer, nonce);
  OMNIB_RETURN_IF_ERROR(write_all(out.fd, hello.data(), hello.size(), deadline_after(timeout_), link + "hello"));
  plan.set.dialer_end[out.link_id] = std::make_unique<TcpConnection>(out.fd, out.peer, job_id_, timeout_);
  out.fd = -1;
  return Status::ok();
}

Status LinkFactory::read_hello(PendingHello& p, Plan& plan, bool& finished) {
  finished = true;
  Status got = p.reader.read_available(p.fd);
  if (!got.is_ok()) {
    reject(p.fd, "failed the hello: " + got.message());
    return Status::ok();
  }
  if (!p.reader.done()) {
    finished = false;
    return Status::ok();
  }
  const wire::HelloPayload& hello = p.reader.hello();
  const HelloClaim claim{job_id_, p.reader.header().tag, hello.rank, hello.link_id};
  if (!hello_proves_token(token_, claim, hello, rank_, p.nonce)) {
    reject(p.fd, "sent a hello that does not prove the job token (another job, or a different OMNIB_JOB_TOKEN?)");
    return Status::ok();
  }
  // From here on the peer is a rank of this job: disagreements are real errors.
  const int dialer = static_cast<int>(hello.rank);
  auto conn = std::make_unique<TcpConnection>(p.fd, dialer, job_id_, timeout_);
  if (claim.plan == plan.number) return take(plan, claim.link_id, dialer, std::move(conn));
  if (claim.plan < plan.number) {
    conn.reset();
    ++rejected_;
    return Status::ok();
  }
  auto [it, fresh] = early_arrivals_.try_emplace({claim.plan, claim.link_id}, EarlyArrival{dialer, std::move(conn)});
  if (!fresh)
    return unavailable_error("rank " + std::to_string(rank_) + ": rank " + std::to_string(dialer) + " dialed link " +
                             std::to_string(claim.link_id) + " of plan " + std::to_string(claim.plan) + " twice");
  return Status::ok();
}

Status LinkFactory::take(Plan& plan, uint32_t link_id, int dialer, std::unique_ptr<Connection> conn) {
  const auto& specs = plan.specs;
  if (link_id >= specs.size() || specs[link_id].acceptor != rank_ || specs[link_id].dialer != dialer ||
      plan.set.acceptor_end[link_id])
    return unavailable_error("rank " + std::to_string(rank_) + ": unexpected link " + std::to_string(link_id) +
                             " from rank " + std::to_string(dialer) +
                             " (ranks disagree on the algorithm list or node count?)");
  plan.set.acceptor_end[link_id] = std::move(conn);
  --plan.expected_incoming;
  return Status::ok();
}

void LinkFactory::reject(int fd, const std::string& why) {
  close(fd);
  if (rejected_++ == 0)
    std::fprintf(stderr,
                 "omni-bench: rank %d: closed a connection to its link port that %s; still waiting for its peers "
                 "(later such connections are counted, not shown)\n",
                 rank_, why.c_str());
}

}  // namespace omnib
