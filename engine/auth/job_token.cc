#include "engine/auth/job_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>

namespace omnib {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Result<JobToken> JobToken::random() {
  JobToken t;
  if (RAND_bytes(t.key_.data(), static_cast<int>(t.key_.size())) != 1)
    return internal_error("cannot draw a random job token: the system's random source failed");
  t.secret_ = true;
  return t;
}

Result<JobToken> JobToken::parse_hex(std::string_view text, const std::string& source) {
  const std::string fix = "; make one with `openssl rand -hex 16` and give every rank the same value";
  if (text.size() != 2 * kBytes)
    return usage_error(source + " must be " + std::to_string(2 * kBytes) + " hex digits (a 128-bit secret), not " +
                       std::to_string(text.size()) + " characters" + fix);
  JobToken t;
  for (size_t i = 0; i < kBytes; ++i) {
    int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return usage_error(source + " has a character that is not a hex digit" + fix);
    t.key_[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  if (std::all_of(t.key_.begin(), t.key_.end(), [](uint8_t b) { return b == 0; }))
    return usage_error(source + " is all zeros, which is no secret" + fix);
  t.secret_ = true;
  return t;
}

std::string JobToken::hex() const {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : key_) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

Mac JobToken::prove(std::string_view label, std::initializer_list<std::string_view> parts) const {
  std::string message(label);
  // The label's length first, so that no label/part split is ambiguous.
  message.insert(0, 1, static_cast<char>(label.size()));
  for (auto p : parts) message += p;
  Mac mac{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), reinterpret_cast<const unsigned char*>(message.data()),
       message.size(), mac.data(), &len);
  return mac;
}

bool JobToken::verify(const Mac& mac, std::string_view label, std::initializer_list<std::string_view> parts) const {
  Mac expected = prove(label, parts);
  return CRYPTO_memcmp(expected.data(), mac.data(), mac.size()) == 0;
}

Result<Nonce> random_nonce() {
  Nonce n{};
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1)
    return internal_error("cannot draw a random nonce: the system's random source failed");
  return n;
}

}  // namespace omnib
