#include "engine/bootstrap/store_protocol.h"

#include <cstring>

namespace omnib::store_wire {

StoreRequest make_request(Op op, uint32_t rank, uint32_t world, uint8_t flags) {
  StoreRequest r{};
  r.magic = kMagic;
  r.op = static_cast<uint8_t>(op);
  r.flags = flags;
  r.rank = rank;
  r.world = world;
  return r;
}

std::string encode_parts(const std::vector<std::string>& parts) {
  size_t total = 0;
  for (const auto& p : parts) total += sizeof(uint64_t) + p.size();
  std::string out;
  out.reserve(total);
  for (const auto& p : parts) {
    uint64_t len = p.size();
    out.append(reinterpret_cast<const char*>(&len), sizeof(len));
    out += p;
  }
  return out;
}

Result<std::vector<std::string>> decode_parts(std::string_view payload, int world) {
  std::vector<std::string> parts;
  parts.reserve(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    uint64_t len = 0;
    if (payload.size() < sizeof(len)) return unavailable_error("gather reply ends before the part of rank " + std::to_string(r));
    std::memcpy(&len, payload.data(), sizeof(len));
    payload.remove_prefix(sizeof(len));
    if (len > payload.size()) return unavailable_error("gather reply's part of rank " + std::to_string(r) + " is cut short");
    parts.emplace_back(payload.substr(0, len));
    payload.remove_prefix(len);
  }
  if (!payload.empty()) return unavailable_error("gather reply has bytes after the last rank's part");
  return parts;
}

}  // namespace omnib::store_wire
