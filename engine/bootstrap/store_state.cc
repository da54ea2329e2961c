#include "engine/bootstrap/store_state.h"

#include <algorithm>

namespace omnib {

using store_wire::GatherFlags;
using store_wire::Op;
using store_wire::ReplyStatus;

namespace {

std::shared_ptr<const std::string> text(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

const std::shared_ptr<const std::string>& empty_payload() {
  static const auto empty = text("");
  return empty;
}

}  // namespace

StoreState::Reply StoreState::refuse(ConnId to, std::string why) { return {to, ReplyStatus::kRefused, text(std::move(why))}; }

void StoreState::handle(ConnId from, const store_wire::StoreRequest& req, std::string key, std::string value,
                        Replies& out) {
  const auto op = static_cast<Op>(req.op);
  if (op == Op::kAbort) {
    abort(static_cast<int>(req.rank), value, out);
    out.push_back({from, ReplyStatus::kOk, empty_payload()});
    return;
  }
  if (abort_message_) {
    out.push_back({from, ReplyStatus::kAborted, abort_message_});
    return;
  }
  const bool collective = op == Op::kBarrier || op == Op::kGather;
  if (collective && (req.world == 0 || req.world > limits_.max_world)) {
    out.push_back(refuse(from, "world size " + std::to_string(req.world) + " is outside 1.." +
                                   std::to_string(limits_.max_world)));
    return;
  }
  switch (op) {
    case Op::kSet:
      return set(from, std::move(key), std::move(value), out);
    case Op::kGet:
      return get(from, key, out);
    case Op::kBarrier:
      return barrier(from, key, req.world, out);
    case Op::kGather:
      if (req.rank >= req.world) {
        out.push_back(refuse(from, "gather '" + key + "': rank " + std::to_string(req.rank) + " is not below world " +
                                       std::to_string(req.world)));
        return;
      }
      if (req.flags != GatherFlags::kToRoot && req.flags != GatherFlags::kEveryone) {
        out.push_back(refuse(from, "gather '" + key + "': unknown flags " + std::to_string(req.flags)));
        return;
      }
      return gather(from, key, req.rank, req.world, req.flags, std::move(value), out);
    default:
      out.push_back(refuse(from, "unknown operation " + std::to_string(req.op)));
  }
}

void StoreState::set(ConnId from, std::string key, std::string value, Replies& out) {
  auto it = data_.find(key);
  if (it != data_.end()) {
    value_bytes_ -= it->second.size();
    value_bytes_ += value.size();
    it->second = std::move(value);
  } else {
    value_bytes_ += key.size() + value.size();
    it = data_.emplace(std::move(key), std::move(value)).first;
  }
  out.push_back({from, ReplyStatus::kOk, empty_payload()});
  auto w = get_waiters_.find(it->first);
  if (w == get_waiters_.end()) return;
  auto payload = text(it->second);
  for (ConnId c : w->second) {
    waiting_.erase(c);
    out.push_back({c, ReplyStatus::kOk, payload});
  }
  get_waiters_.erase(w);
}

void StoreState::get(ConnId from, const std::string& key, Replies& out) {
  auto it = data_.find(key);
  if (it != data_.end()) {
    out.push_back({from, ReplyStatus::kOk, text(it->second)});
    return;
  }
  get_waiters_[key].push_back(from);
  wait(from, WaitKind::kGet, key);
}

void StoreState::barrier(ConnId from, const std::string& name, uint32_t world, Replies& out) {
  auto [it, fresh] = barriers_.try_emplace(name);
  Barrier& b = it->second;
  if (fresh) {
    b.world = world;
    value_bytes_ += name.size();
  } else if (b.world != world) {
    out.push_back(refuse(from, "barrier '" + name + "' entered with world " + std::to_string(world) + " and " +
                                   std::to_string(b.world) + " (do the ranks agree on the job size?)"));
    return;
  }
  ++b.arrived;
  b.waiters.push_back(from);
  if (b.arrived < b.world) {
    wait(from, WaitKind::kBarrier, name);
    return;
  }
  for (ConnId c : b.waiters) {
    waiting_.erase(c);
    out.push_back({c, ReplyStatus::kOk, empty_payload()});
  }
  value_bytes_ -= name.size();
  barriers_.erase(it);
}

void StoreState::gather(ConnId from, const std::string& name, uint32_t rank, uint32_t world, uint8_t flags,
                        std::string part, Replies& out) {
  auto [it, fresh] = gathers_.try_emplace(name);
  Gather& g = it->second;
  if (fresh) {
    g.world = world;
    g.flags = flags;
    g.parts.resize(world);
    value_bytes_ += name.size();
  } else if (g.world != world || g.flags != flags) {
    out.push_back(refuse(from, "gather '" + name + "' entered with different world sizes or modes"));
    return;
  }
  if (g.parts[rank]) {
    out.push_back(refuse(from, "gather '" + name + "': rank " + std::to_string(rank) + " contributed twice"));
    return;
  }
  value_bytes_ += part.size();
  g.parts[rank] = std::move(part);
  ++g.contributed;
  const bool reads = flags == GatherFlags::kEveryone || rank == 0;
  if (reads) {
    g.waiters[from] = rank;
    wait(from, WaitKind::kGather, name);
  } else {
    out.push_back({from, ReplyStatus::kOk, empty_payload()});
  }
  if (g.contributed == g.world) finish_gather(it, out);
}

void StoreState::finish_gather(std::map<std::string, Gather>::iterator it, Replies& out) {
  Gather& g = it->second;
  std::vector<std::string> parts;
  parts.reserve(g.parts.size());
  for (auto& p : g.parts) {
    value_bytes_ -= p->size();
    parts.push_back(std::move(*p));
  }
  auto payload = text(store_wire::encode_parts(parts));
  for (const auto& [conn, rank] : g.waiters) {
    waiting_.erase(conn);
    out.push_back({conn, ReplyStatus::kOk, payload});
  }
  value_bytes_ -= it->first.size();
  gathers_.erase(it);
}

void StoreState::abort(int rank, const std::string& message, Replies& out) {
  if (abort_message_) return;  // the first failure is the cause; later ones are its echoes
  abort_message_ = text("rank " + std::to_string(rank) + " failed: " + message);
  for (const auto& [conn, what] : waiting_) out.push_back({conn, ReplyStatus::kAborted, abort_message_});
  waiting_.clear();
  get_waiters_.clear();
  for (const auto& [name, b] : barriers_) value_bytes_ -= name.size();
  barriers_.clear();
  for (const auto& [name, g] : gathers_) {
    value_bytes_ -= name.size();
    for (const auto& p : g.parts)
      if (p) value_bytes_ -= p->size();
  }
  gathers_.clear();
}

void StoreState::wait(ConnId conn, WaitKind kind, const std::string& name) { waiting_[conn] = {kind, name}; }

void StoreState::drop(ConnId conn) {
  auto it = waiting_.find(conn);
  if (it == waiting_.end()) return;
  const auto& [kind, name] = it->second;
  if (kind == WaitKind::kGet) {
    auto w = get_waiters_.find(name);
    std::erase(w->second, conn);
    if (w->second.empty()) get_waiters_.erase(w);
  } else if (kind == WaitKind::kBarrier) {
    // Its arrival still counts: it did reach the barrier.
    std::erase(barriers_.at(name).waiters, conn);
  } else {
    gathers_.at(name).waiters.erase(conn);
  }
  waiting_.erase(it);
}

StoreState::Counts StoreState::counts() const {
  return {data_.size(), value_bytes_, barriers_.size() + gathers_.size(), waiting_.size()};
}

}  // namespace omnib
