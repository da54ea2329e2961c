// Raw peers of the rendezvous store, for tests that play a stranger, a
// client that misbehaves, or a server that trickles its bytes; and the
// process figures (descriptors, memory, CPU) those tests watch.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "engine/auth/job_token.h"
#include "engine/bootstrap/store_protocol.h"
#include "engine/sockets/socket_util.h"

namespace omnib::testing {

// Two different job tokens.
JobToken test_token();
JobToken other_token();

// Clears O_NONBLOCK (the engine's sockets are non-blocking).
void make_blocking(int fd);
// A plain blocking TCP connection to `to` (-1 on failure).
int raw_connect(const SocketAddress& to);
// The client's half of the store handshake on a raw connection.
bool prove_as_client(int fd, const JobToken& token);
// The server's half: greeting, the client's proof, the answer.
bool prove_as_server(int fd, const JobToken& token);
// One request as the client sends it.
std::string request_bytes(store_wire::Op op, const std::string& key, const std::string& value, uint32_t rank = 0,
                          uint32_t world = 0, uint8_t flags = 0);
// Sends all of `bytes` on a blocking fd; false if the peer is gone.
bool send_raw(int fd, const std::string& bytes);
// True when the peer closed `fd` within `limit` (reads and drops anything it sent).
bool closed_by_peer(int fd, std::chrono::milliseconds limit);

// Polls `done` every 10 ms until it holds or `limit` passes; returns its last value.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit);

int open_descriptors();                // of this process
uint64_t resident_bytes();             // of this process
double cpu_seconds_of(pid_t pid);      // user + system time so far

}  // namespace omnib::testing
