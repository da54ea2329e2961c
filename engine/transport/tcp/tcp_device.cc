#include "engine/transport/tcp/tcp_device.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "engine/transport/tcp/tcp_connection.h"

namespace omnib {
namespace {

int poll_ms_until(SteadyClock::time_point t) {
  const auto now = SteadyClock::now();
  if (t <= now) return 0;
  return static_cast<int>(std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(t - now).count(), 1000));
}

}  // namespace

Result<std::unique_ptr<TcpDevice>> TcpDevice::open(const DeviceContext& context) {
  auto fd = listen_on({context.bind_host, 0}, 1024);
  if (!fd.is_ok()) return fd.status().with_context("rank " + std::to_string(context.rank) + ": ");
  auto addr = local_address(fd.value());
  if (!addr.is_ok()) {
    close(fd.value());
    return addr.status();
  }
  std::unique_ptr<TcpDevice> d(new TcpDevice(context, fd.value()));
  OMNIB_RETURN_IF_ERROR(context.store->set("addr/" + std::to_string(context.rank), addr.value().to_string()));
  return d;
}

TcpDevice::~TcpDevice() {
  for (const auto& o : outgoing_) close(o.fd);
  for (const auto& p : pending_) close(p.fd);
  close(listen_fd_);
}

Status TcpDevice::dial(const HelloClaim& claim, int acceptor, SteadyClock::time_point deadline) {
  // Connecting needs only the peer's listener, which exists from open().
  auto fd = dial_peer(acceptor, deadline);
  if (!fd.is_ok()) return fd.status();
  outgoing_.push_back({claim, acceptor, fd.value(), OpeningFrameReader(wire::FrameType::kChallenge, context_.job_id)});
  return Status::ok();
}

Result<std::optional<OpenedLink>> TcpDevice::next_link(SteadyClock::time_point deadline) {
  // Challenges to answer, hellos to read and strangers to turn away, all at once.
  while (ready_.empty()) {
    const auto now = SteadyClock::now();
    if (now >= deadline) return std::optional<OpenedLink>();
    auto wake = deadline;
    for (const auto& p : pending_) wake = std::min(wake, p.expires);
    const bool listening = now >= listen_paused_until_;
    if (!listening) wake = std::min(wake, listen_paused_until_);

    std::vector<pollfd> fds;
    fds.push_back({listening ? listen_fd_ : -1, POLLIN, 0});
    for (const auto& o : outgoing_) fds.push_back({o.fd, POLLIN, 0});
    for (const auto& p : pending_) fds.push_back({p.fd, POLLIN, 0});
    int rc = poll(fds.data(), fds.size(), poll_ms_until(wake));
    if (rc < 0 && errno != EINTR) return unavailable_error(std::string("poll on link sockets: ") + std::strerror(errno));
    if (rc <= 0) fds.assign(fds.size(), pollfd{-1, 0, 0});

    // Pending hellos first (their indices shift once outgoing links finish).
    const size_t first_pending = 1 + outgoing_.size();
    for (size_t i = pending_.size(); i-- > 0;) {
      PendingHello& p = pending_[i];
      bool finished = false;  // its descriptor is closed or handed on
      if (fds[first_pending + i].revents) {
        finished = read_hello(p);
      } else if (SteadyClock::now() >= p.expires) {
        reject(p.fd, "sent no hello within the timeout");
        finished = true;
      }
      if (finished) pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (size_t i = outgoing_.size(); i-- > 0;) {
      if (!fds[1 + i].revents) continue;
      OMNIB_RETURN_IF_ERROR(answer_challenge(outgoing_[i]));
      if (outgoing_[i].fd < 0) outgoing_.erase(outgoing_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    // Out of descriptors, a readable listener would wake us at once: look again shortly.
    if (fds[0].revents && !accept_pending()) listen_paused_until_ = SteadyClock::now() + std::chrono::milliseconds(50);
  }
  OpenedLink link = std::move(ready_.front());
  ready_.pop_front();
  return std::optional<OpenedLink>(std::move(link));
}

Result<int> TcpDevice::dial_peer(int acceptor, SteadyClock::time_point deadline) {
  auto it = peer_addresses_.find(acceptor);
  if (it == peer_addresses_.end()) {
    auto text = context_.store->get("addr/" + std::to_string(acceptor));
    if (!text.is_ok()) return text.status().with_context("looking up rank " + std::to_string(acceptor) + ": ");
    auto parsed = parse_socket_address(text.value());
    if (!parsed.is_ok()) return parsed.status().with_context("the store's addr/" + std::to_string(acceptor) + ": ");
    it = peer_addresses_.emplace(acceptor, parsed.value()).first;
  }
  auto fd = omnib::dial(it->second, deadline);
  if (!fd.is_ok()) return fd.status();
  (void)configure_stream_socket(fd.value());
  return fd.value();
}

bool TcpDevice::accept_pending() {
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
    const std::string challenge = challenge_frame(context_.job_id, nonce.value());
    if (::send(fd, challenge.data(), challenge.size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
        static_cast<ssize_t>(challenge.size())) {
      reject(fd, "closed before it got its challenge");
      continue;
    }
    if (pending_.size() >= kMaxPendingHellos) {
      reject(pending_.front().fd, "was pushed out by newer connections before it sent a hello");
      pending_.pop_front();
    }
    pending_.push_back({fd, nonce.value(), OpeningFrameReader(wire::FrameType::kHello, context_.job_id),
                        deadline_after(context_.timeout)});
  }
}

Status TcpDevice::answer_challenge(Outgoing& out) {
  const std::string link =
      "rank " + std::to_string(context_.rank) + " -> rank " + std::to_string(out.peer) + ": ";
  Status got = out.reader.read_available(out.fd);
  if (!got.is_ok()) return got.with_context(link + "the peer's challenge: ");
  if (!out.reader.done()) return Status::ok();
  Nonce nonce{};
  std::memcpy(nonce.data(), out.reader.challenge().nonce, nonce.size());
  const std::string hello = hello_frame(context_.token, out.claim, out.peer, nonce);
  OMNIB_RETURN_IF_ERROR(
      write_all(out.fd, hello.data(), hello.size(), deadline_after(context_.timeout), link + "hello"));
  ready_.push_back(
      {true, out.claim, out.peer, std::make_unique<TcpConnection>(out.fd, out.peer, context_.job_id, context_.timeout)});
  out.fd = -1;
  return Status::ok();
}

bool TcpDevice::read_hello(PendingHello& p) {
  Status got = p.reader.read_available(p.fd);
  if (!got.is_ok()) {
    reject(p.fd, "failed the hello: " + got.message());
    return true;
  }
  if (!p.reader.done()) return false;
  const wire::HelloPayload& hello = p.reader.hello();
  const HelloClaim claim{context_.job_id, p.reader.header().tag, hello.rank, hello.link_id};
  if (!hello_proves_token(context_.token, claim, hello, context_.rank, p.nonce)) {
    reject(p.fd, "sent a hello that does not prove the job token (another job, or a different OMNIB_JOB_TOKEN?)");
    return true;
  }
  const int dialer = static_cast<int>(hello.rank);
  ready_.push_back({false, claim, dialer, std::make_unique<TcpConnection>(p.fd, dialer, context_.job_id, context_.timeout)});
  return true;
}

void TcpDevice::reject(int fd, const std::string& why) {
  close(fd);
  note_rejection(context_.rank, rejected_, "closed a connection to its link port that " + why);
}

}  // namespace omnib
