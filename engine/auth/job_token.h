// The job secret: a 128-bit token every rank of one job shares (the local
// launcher makes one per run; under mpirun/srun/torchrun the user exports
// OMNIB_JOB_TOKEN). It never crosses the wire: a connection proves it with
// an HMAC-SHA256 over a fresh nonce of the accepting side (store handshake:
// engine/bootstrap/store_protocol.h; link hello: engine/transport/link_hello.h).
//
// Without a token a job runs "unauthenticated": the same handshakes run with
// an all-zero key, which keeps strays that speak another protocol out but
// proves nothing about who connects.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "engine/base/status.h"

namespace omnib {

using Nonce = std::array<uint8_t, 16>;
using Mac = std::array<uint8_t, 32>;  // HMAC-SHA256

class JobToken {
 public:
  static constexpr size_t kBytes = 16;

  // The all-zero key of an unauthenticated run (as unauthenticated()).
  JobToken() { key_.fill(0); }

  // A fresh random token (OpenSSL's CSPRNG); kInternal if it has no entropy.
  static Result<JobToken> random();
  // Exactly 32 hex digits; an all-zero token is refused (it is the key of
  // unauthenticated runs). The message names `source` and the fix.
  static Result<JobToken> parse_hex(std::string_view text, const std::string& source);
  // The all-zero key of an unauthenticated run.
  static JobToken unauthenticated() { return JobToken(); }

  std::string hex() const;
  bool is_secret() const { return secret_; }

  // HMAC-SHA256 keyed with the token over `label` and then every part, in
  // order. Labels keep proofs of one protocol from being replayed in another.
  Mac prove(std::string_view label, std::initializer_list<std::string_view> parts) const;
  // Constant-time comparison of `mac` with prove(label, parts).
  bool verify(const Mac& mac, std::string_view label, std::initializer_list<std::string_view> parts) const;

 private:
  std::array<uint8_t, kBytes> key_;
  bool secret_ = false;
};

// A fresh random nonce (OpenSSL's CSPRNG).
Result<Nonce> random_nonce();

// Views for prove()/verify() parts.
inline std::string_view bytes_of(const Nonce& n) { return {reinterpret_cast<const char*>(n.data()), n.size()}; }
template <typename T>
std::string_view bytes_of_value(const T& v) {
  return {reinterpret_cast<const char*>(&v), sizeof(v)};
}

}  // namespace omnib
