// The rendezvous store's request handling (engine/bootstrap/store_state.cc),
// which serves requests from any connection that proved the job token, and
// the client's decoding of gather replies (store_protocol.cc decode_parts).
// A sequence of requests from a few connections, with connections dropping
// and the job aborting in between, must never crash, must answer only
// connections that asked, and must account for no more bytes than it was
// given; a decoded reply encodes back to the same bytes.
//
// Input, repeated: uint8 connection (0..7, or 8..15: drop it; 255: abort),
// then a StoreRequest (32 bytes), uint8 key length, uint16 value length,
// the key and the value bytes.
#include <set>
#include <string>

#include "engine/bootstrap/store_state.h"
#include "fuzz/fuzz_input.h"

using namespace omnib;
using fuzz::FuzzInput;
using store_wire::StoreRequest;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  StoreLimits limits;
  limits.max_world = 8;  // small worlds finish barriers and gathers often
  StoreState state(limits);
  std::set<StoreState::ConnId> waiting;
  uint64_t given = 0;
  while (!in.empty()) {
    const uint8_t who = in.take<uint8_t>();
    StoreState::Replies out;
    if (who == 255) {
      state.abort(0, "fuzzed failure", out);
    } else if (who >= 8 && who < 16) {
      state.drop(who - 8);
      waiting.erase(who - 8);
      continue;
    } else {
      StoreRequest req = in.take<StoreRequest>();
      const auto key = in.take_bytes(in.take<uint8_t>());
      const auto value = in.take_bytes(in.take<uint16_t>());
      // What the server's header check lets through (tcp_store_requests.cc).
      req.magic = store_wire::kMagic;
      req.key_len = static_cast<uint32_t>(key.size());
      req.value_len = value.size();
      if (req.world > limits.max_world) continue;
      const StoreState::ConnId from = who % 8;
      if (waiting.count(from)) continue;  // one request in progress per connection
      given += key.size() + value.size();
      state.handle(from, req, std::string(key.begin(), key.end()), std::string(value.begin(), value.end()), out);
      waiting.insert(from);
    }
    for (const auto& r : out) {
      if (!waiting.count(r.to)) fuzz::fail("a reply to a connection that was not waiting");
      if (!r.payload) fuzz::fail("a reply without a payload");
      waiting.erase(r.to);
    }
    if (state.counts().value_bytes > given) fuzz::fail("the store accounts for more bytes than it was given");
  }
  // The client's side: a gather reply of the world size it expects.
  const std::string reply(reinterpret_cast<const char*>(data), size);
  for (int world : {1, 2, 3}) {
    auto parts = store_wire::decode_parts(reply, world);
    if (parts.is_ok() && store_wire::encode_parts(parts.value()) != reply)
      fuzz::fail("a decoded gather reply does not encode back to its bytes");
  }
  return 0;
}
