#include <cstring>

#include "engine/bootstrap/tcp_store_loop.h"

namespace omnib {

void TcpStoreServer::Loop::feed(Conn* c, const char* data, size_t n) {
  while (n > 0 && !c->closing) {
    size_t want = 0;
    switch (c->phase) {
      case Phase::kProof: want = sizeof(store_wire::StoreClientProof) - c->in.size(); break;
      case Phase::kHeader: want = sizeof(StoreRequest) - c->in.size(); break;
      case Phase::kBody: want = c->reserved - c->in.size(); break;
      case Phase::kDiscard: {
        const size_t drop = static_cast<size_t>(std::min<uint64_t>(c->discard_left, n));
        c->discard_left -= drop;
        data += drop;
        n -= drop;
        if (c->discard_left == 0) c->phase = Phase::kHeader;
        continue;
      }
      case Phase::kWaiting:
        // One request at a time: a client that sends more before its reply
        // breaks the protocol.
        close_conn(c, true);
        return;
    }
    const size_t take = std::min(want, n);
    c->in.append(data, take);
    data += take;
    n -= take;
    if (take < want) return;
    if (c->phase == Phase::kProof) {
      check_proof(c);
    } else if (c->phase == Phase::kHeader) {
      check_header(c);
    } else {
      dispatch(c);
    }
  }
}

void TcpStoreServer::Loop::check_proof(Conn* c) {
  store_wire::StoreClientProof proof{};
  std::memcpy(&proof, c->in.data(), sizeof(proof));
  c->in.clear();
  if (!token_.verify(proof.mac, store_wire::kClientLabel, {bytes_of(c->nonce), bytes_of(proof.nonce)})) {
    close_conn(c, true);
    return;
  }
  handshaking_.erase(c->handshaking);
  c->phase = Phase::kHeader;
  store_wire::StoreServerProof answer{token_.prove(store_wire::kServerLabel, {bytes_of(c->nonce), bytes_of(proof.nonce)})};
  send_bytes(c, std::string(reinterpret_cast<const char*>(&answer), sizeof(answer)));
}

void TcpStoreServer::Loop::check_header(Conn* c) {
  std::memcpy(&c->req, c->in.data(), sizeof(c->req));
  c->in.clear();
  const StoreRequest& r = c->req;
  const auto op = static_cast<Op>(r.op);
  const bool known = op == Op::kSet || op == Op::kGet || op == Op::kBarrier || op == Op::kGather || op == Op::kAbort;
  if (r.magic != store_wire::kMagic || !known) {
    close_conn(c, true);
    return;
  }
  // Clients check these limits before sending: breaking one is abuse.
  if (r.key_len > limits_.max_key_bytes || r.value_len > limits_.max_value_bytes) {
    close_conn(c, true);
    return;
  }
  const uint64_t body = uint64_t{r.key_len} + r.value_len;
  if (state_.counts().value_bytes + in_flight_ + body > limits_.max_buffered_bytes) {
    c->discard_left = body;
    return refuse(c, "it holds " + std::to_string(state_.counts().value_bytes + in_flight_) + " bytes, takes at most " +
                         std::to_string(limits_.max_buffered_bytes) + ", and this request brings " +
                         std::to_string(body));
  }
  // Counted now, allocated only as the bytes arrive.
  c->reserved = body;
  in_flight_ += body;
  c->phase = Phase::kBody;
  if (body == 0) dispatch(c);
}

void TcpStoreServer::Loop::dispatch(Conn* c) {
  std::string key = c->in.substr(0, c->req.key_len);
  std::string value = c->in.substr(c->req.key_len);
  std::string().swap(c->in);  // a large body's buffer goes back now
  in_flight_ -= c->reserved;
  c->reserved = 0;
  c->phase = Phase::kWaiting;  // until deliver() queues its reply
  StoreState::Replies out;
  state_.handle(c->id, c->req, std::move(key), std::move(value), out);
  deliver(out);
}

void TcpStoreServer::Loop::deliver(const StoreState::Replies& replies) {
  publish();  // before the replies: a client that reads them may look at the stats
  for (const auto& r : replies) {
    auto it = conns_.find(r.to);
    if (it != conns_.end()) send_reply(it->second, r.status, r.payload);
  }
}

void TcpStoreServer::Loop::refuse(Conn* c, const std::string& why) {
  c->phase = c->discard_left > 0 ? Phase::kDiscard : Phase::kWaiting;
  send_reply(c, ReplyStatus::kRefused, std::make_shared<const std::string>(why));
}

}  // namespace omnib
