#include "engine/transport/socket_util.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
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

Result<int> dial(const SocketAddress& to, std::chrono::steady_clock::time_point deadline) {
  auto sa = resolve_ipv4(to);
  if (!sa.is_ok()) return sa.status();
  auto backoff = std::chrono::milliseconds(5);
  while (true) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return unavailable_error("socket(): " + errno_text(errno));
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa.value()), sizeof(sockaddr_in)) == 0) return fd;
    int err = errno;
    close(fd);
    bool retryable = err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH || err == EHOSTUNREACH ||
                     err == EAGAIN || err == ECONNRESET;
    if (!retryable) return unavailable_error("connect to " + to.to_string() + ": " + errno_text(err));
    if (std::chrono::steady_clock::now() + backoff > deadline)
      return timeout_error("could not connect to " + to.to_string() + " before the timeout (" + errno_text(err) +
                           "); is the peer running and reachable?");
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
  }
}

Result<int> accept_before(int listen_fd, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return timeout_error("no peer connected before the timeout");
    pollfd p{listen_fd, POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) return unavailable_error("poll on listener: " + errno_text(errno));
    if (rc <= 0) continue;
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
      return unavailable_error("accept: " + errno_text(errno));
  }
}

Status configure_stream_socket(int fd, std::chrono::milliseconds timeout) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int buf = 4 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  timeval tv{};
  tv.tv_sec = timeout.count() / 1000;
  tv.tv_usec = (timeout.count() % 1000) * 1000;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0)
    return internal_error("setsockopt timeouts: " + errno_text(errno));
  return Status::ok();
}

Status write_all(int fd, const void* data, size_t n, const std::string& what) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return timeout_error(what + ": send timed out");
      return unavailable_error(what + ": send failed: " + errno_text(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::ok();
}

Status read_all(int fd, void* data, size_t n, const std::string& what) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r == 0) return unavailable_error(what + ": peer closed the connection (did it exit or crash?)");
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return timeout_error(what + ": nothing received within the timeout");
      return unavailable_error(what + ": receive failed: " + errno_text(errno));
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::ok();
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
