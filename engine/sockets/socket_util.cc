#include "engine/sockets/socket_util.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <thread>

namespace omnib {
namespace {

std::string errno_text(int err) { return std::string(std::strerror(err)); }

Result<sockaddr_in> resolve_ipv4(const SocketAddress& a) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(a.port);
  if (inet_pton(AF_INET, a.host.c_str(), &sa.sin_addr) == 1) return sa;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(a.host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr)
    return usage_error("cannot resolve host '" + a.host + "': " + gai_strerror(rc));
  sa.sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  return sa;
}

}  // namespace

Result<SocketAddress> parse_socket_address(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    return usage_error("address '" + text + "' is not host:port");
  SocketAddress a;
  a.host = text.substr(0, colon);
  try {
    unsigned long port = std::stoul(text.substr(colon + 1));
    if (port > 65535) throw std::out_of_range("port");
    a.port = static_cast<uint16_t>(port);
  } catch (const std::exception&) {
    return usage_error("address '" + text + "' has no valid port (0-65535)");
  }
  return a;
}

Result<int> listen_on(const SocketAddress& where, int backlog) {
  auto sa = resolve_ipv4(where);
  if (!sa.is_ok()) return sa.status();
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return unavailable_error("socket(): " + errno_text(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<sockaddr*>(&sa.value()), sizeof(sockaddr_in)) != 0) {
    int err = errno;
    close(fd);
    return unavailable_error("cannot listen on " + where.to_string() + ": bind: " + errno_text(err));
  }
  if (listen(fd, backlog) != 0) {
    int err = errno;
    close(fd);
    return unavailable_error("listen on " + where.to_string() + ": " + errno_text(err));
  }
  return fd;
}

Result<SocketAddress> local_address(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof(sa);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
    return internal_error("getsockname: " + errno_text(errno));
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &sa.sin_addr, buf, sizeof(buf));
  return SocketAddress{buf, ntohs(sa.sin_port)};
}

SteadyClock::time_point deadline_after(std::chrono::milliseconds timeout) {
  const auto now = SteadyClock::now();
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::time_point::max() - now);
  return timeout >= room ? SteadyClock::time_point::max() : now + timeout;
}

namespace {

// Milliseconds left before `deadline` for poll(): rounded up, so a wait never
// wakes just before its deadline and spins; capped to what poll takes.
int poll_ms_left(SteadyClock::time_point deadline) {
  const auto now = SteadyClock::now();
  if (now >= deadline) return 0;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
  return static_cast<int>(std::min<int64_t>(left, std::numeric_limits<int>::max()));
}

// Finishes a non-blocking connect: 0 when connected, else the errno.
int finish_connect(int fd, SteadyClock::time_point deadline) {
  pollfd p{fd, POLLOUT, 0};
  while (true) {
    int rc = poll(&p, 1, poll_ms_left(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return errno;
    if (rc == 0) return ETIMEDOUT;
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
    return err;
  }
}

}  // namespace

Result<int> dial(const SocketAddress& to, SteadyClock::time_point deadline) {
  auto sa = resolve_ipv4(to);
  if (!sa.is_ok()) return sa.status();
  auto backoff = std::chrono::milliseconds(5);
  while (true) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return unavailable_error("socket(): " + errno_text(errno));
    // Non-blocking, so that a host that drops SYNs cannot hold us past the deadline.
    int err = connect(fd, reinterpret_cast<sockaddr*>(&sa.value()), sizeof(sockaddr_in)) == 0 ? 0 : errno;
    if (err == EINPROGRESS) err = finish_connect(fd, deadline);
    if (err == 0) return fd;
    close(fd);
    bool retryable = err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH || err == EHOSTUNREACH ||
                     err == EAGAIN || err == ECONNRESET;
    if (!retryable) return unavailable_error("connect to " + to.to_string() + ": " + errno_text(err));
    if (SteadyClock::now() + backoff > deadline)
      return timeout_error("could not connect to " + to.to_string() + " before the timeout (" + errno_text(err) +
                           "); is the peer running and reachable?");
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
  }
}

Result<int> accept_before(int listen_fd, SteadyClock::time_point deadline) {
  while (true) {
    Status ready = wait_ready(listen_fd, POLLIN, deadline, "listener");
    if (!ready.is_ok()) {
      if (ready.code() == Code::kTimeout) return timeout_error("no peer connected before the timeout");
      return ready;
    }
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) return fd;
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
      return unavailable_error("accept: " + errno_text(errno));
  }
}

Status configure_stream_socket(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int buf = 4 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  return Status::ok();
}

Status wait_ready(int fd, short events, SteadyClock::time_point deadline, const std::string& what) {
  pollfd p{fd, events, 0};
  while (true) {
    int rc = poll(&p, 1, poll_ms_left(deadline));
    if (rc > 0) return Status::ok();  // ready, or an error/hangup the next call reports
    if (rc < 0 && errno != EINTR) return unavailable_error(what + ": poll failed: " + errno_text(errno));
    if (rc == 0 && SteadyClock::now() >= deadline) return timeout_error(what + ": timed out");
  }
}

Status write_all(int fd, const void* data, size_t n, SteadyClock::time_point deadline, const std::string& what) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return unavailable_error(what + ": send failed: " + errno_text(errno));
      Status ready = wait_ready(fd, POLLOUT, deadline, what);
      if (ready.code() == Code::kTimeout) return timeout_error(what + ": send did not finish within the timeout");
      OMNIB_RETURN_IF_ERROR(ready);
      continue;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::ok();
}

Status read_all(int fd, void* data, size_t n, SteadyClock::time_point deadline, const std::string& what) {
  char* p = static_cast<char*>(data);
  const size_t wanted = n;
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, MSG_DONTWAIT);
    if (r == 0) return unavailable_error(what + ": peer closed the connection (did it exit or crash?)");
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        return unavailable_error(what + ": receive failed: " + errno_text(errno));
      Status ready = wait_ready(fd, POLLIN, deadline, what);
      if (ready.code() == Code::kTimeout)
        return timeout_error(what + (n == wanted ? ": nothing received within the timeout"
                                                 : ": only " + std::to_string(wanted - n) + " of " +
                                                       std::to_string(wanted) + " bytes arrived within the timeout"));
      OMNIB_RETURN_IF_ERROR(ready);
      continue;
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::ok();
}

void raise_descriptor_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= lim.rlim_max) return;
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
}

Result<std::string> route_source_address(const std::string& remote_host) {
  auto sa = resolve_ipv4({remote_host, 9});
  if (!sa.is_ok()) return sa.status();
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return unavailable_error("socket(): " + errno_text(errno));
  // A UDP connect sends nothing; it only asks the kernel for the route.
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa.value()), sizeof(sockaddr_in)) != 0) {
    int err = errno;
    close(fd);
    return unavailable_error("no route to " + remote_host + ": " + errno_text(err));
  }
  auto local = local_address(fd);
  close(fd);
  if (!local.is_ok()) return local.status();
  return local.value().host;
}

}  // namespace omnib
