#include "tests/support/store_peer.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace omnib::testing {

using store_wire::StoreClientProof;
using store_wire::StoreGreeting;
using store_wire::StoreServerProof;

namespace {

bool recv_exact(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

template <typename T>
std::string as_bytes(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
}

}  // namespace

JobToken test_token() { return JobToken::parse_hex("00112233445566778899aabbccddeeff", "test").value(); }
JobToken other_token() { return JobToken::parse_hex("ffeeddccbbaa99887766554433221100", "test").value(); }

void make_blocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); }

int raw_connect(const SocketAddress& to) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(to.port);
  inet_pton(AF_INET, to.host.c_str(), &sa.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool send_raw(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

bool prove_as_client(int fd, const JobToken& token) {
  StoreGreeting greeting{};
  if (!recv_exact(fd, &greeting, sizeof(greeting))) return false;
  StoreClientProof proof{};
  proof.nonce.fill(7);
  proof.mac = token.prove(store_wire::kClientLabel, {bytes_of(greeting.nonce), bytes_of(proof.nonce)});
  if (!send_raw(fd, as_bytes(proof))) return false;
  StoreServerProof answer{};
  return recv_exact(fd, &answer, sizeof(answer));
}

bool prove_as_server(int fd, const JobToken& token) {
  StoreGreeting greeting{store_wire::kMagic, store_wire::kVersion, 0, {}};
  greeting.nonce.fill(9);
  if (!send_raw(fd, as_bytes(greeting))) return false;
  StoreClientProof proof{};
  if (!recv_exact(fd, &proof, sizeof(proof))) return false;
  if (!token.verify(proof.mac, store_wire::kClientLabel, {bytes_of(greeting.nonce), bytes_of(proof.nonce)}))
    return false;
  StoreServerProof answer{token.prove(store_wire::kServerLabel, {bytes_of(greeting.nonce), bytes_of(proof.nonce)})};
  return send_raw(fd, as_bytes(answer));
}

std::string request_bytes(store_wire::Op op, const std::string& key, const std::string& value, uint32_t rank,
                          uint32_t world, uint8_t flags) {
  store_wire::StoreRequest r = store_wire::make_request(op, rank, world, flags);
  r.key_len = static_cast<uint32_t>(key.size());
  r.value_len = value.size();
  return as_bytes(r) + key + value;
}

bool closed_by_peer(int fd, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
    if (r <= 0) return true;
  }
  return false;
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

int open_descriptors() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (readdir(d)) ++n;
  closedir(d);
  return n - 3;  // ".", ".." and the directory's own descriptor
}

uint64_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  f >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

double cpu_seconds_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces) start at ") ".
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::vector<std::string> fields;
  for (std::string x; rest >> x;) fields.push_back(x);
  // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
  if (fields.size() < 13) return 0;
  return static_cast<double>(std::stoull(fields[11]) + std::stoull(fields[12])) / sysconf(_SC_CLK_TCK);
}

}  // namespace omnib::testing
