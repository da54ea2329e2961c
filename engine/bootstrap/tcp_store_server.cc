#include "engine/bootstrap/tcp_store_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "engine/bootstrap/tcp_store_loop.h"

namespace omnib {

Status TcpStoreServer::Loop::open(int listen_fd) {
  listen_fd_ = listen_fd;
  if (int err = uv_loop_init(&loop_); err != 0) return internal_error(std::string("uv_loop_init: ") + uv_strerror(err));
  loop_.data = this;
  // libuv's own uv_listen() retries accept() in a loop when descriptors run
  // out and its one spare descriptor is gone (taken by another thread): a busy
  // loop. Watching the listener ourselves lets us pause accepting instead.
  uv_poll_init_socket(&loop_, &listener_, listen_fd);
  listener_.data = this;
  uv_poll_start(&listener_, UV_READABLE, on_listener);
  uv_timer_init(&loop_, &resume_);
  resume_.data = this;
  uv_timer_init(&loop_, &sweep_);
  sweep_.data = this;
  uv_timer_start(&sweep_, on_sweep, kSweepMs, kSweepMs);
  uv_async_init(&loop_, &wakeup_, on_wakeup);
  wakeup_.data = this;
  return Status::ok();
}

TcpStoreServer::Loop::~Loop() {
  uv_loop_close(&loop_);
  if (listen_fd_ >= 0) close(listen_fd_);
}

void TcpStoreServer::Loop::stop() {
  {
    std::lock_guard lock(mu_);
    stop_requested_ = true;
  }
  uv_async_send(&wakeup_);
  if (thread_.joinable()) thread_.join();
}

void TcpStoreServer::Loop::post_abort(int rank, const std::string& message) {
  {
    std::lock_guard lock(mu_);
    aborts_.emplace_back(rank, message);
  }
  uv_async_send(&wakeup_);
}

StoreStats TcpStoreServer::Loop::stats() const {
  return {s_keys_.load(), s_value_bytes_.load(), s_pending_.load(), s_waiters_.load(),
          s_buffered_.load(), s_open_.load(),        s_rejected_.load(), s_pauses_.load()};
}

void TcpStoreServer::Loop::publish() {
  const auto c = state_.counts();
  s_keys_ = c.keys;
  s_value_bytes_ = c.value_bytes;
  s_pending_ = c.pending_collectives;
  s_waiters_ = c.waiters;
  s_buffered_ = c.value_bytes + in_flight_;
  s_open_ = conns_.size();
}

void TcpStoreServer::Loop::on_wakeup(uv_async_t* a) {
  auto* self = static_cast<Loop*>(a->data);
  std::vector<std::pair<int, std::string>> aborts;
  bool stop = false;
  {
    std::lock_guard lock(self->mu_);
    aborts.swap(self->aborts_);
    stop = self->stop_requested_;
  }
  for (const auto& [rank, message] : aborts) {
    StoreState::Replies out;
    self->state_.abort(rank, message, out);
    self->deliver(out);
  }
  if (stop) self->shut_down();
  self->publish();
}

void TcpStoreServer::Loop::shut_down() {
  uv_poll_stop(&listener_);
  uv_close(reinterpret_cast<uv_handle_t*>(&listener_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&resume_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sweep_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&wakeup_), nullptr);
  std::vector<Conn*> all;
  for (auto& [id, c] : conns_) all.push_back(c);
  for (Conn* c : all) close_conn(c, false);
}

void TcpStoreServer::Loop::on_listener(uv_poll_t* h, int status, int events) {
  static_cast<Loop*>(h->data)->accept_some();
}

void TcpStoreServer::Loop::on_resume(uv_timer_t* t) {
  auto* self = static_cast<Loop*>(t->data);
  uv_poll_start(&self->listener_, UV_READABLE, on_listener);
}

void TcpStoreServer::Loop::accept_some() {
  for (int i = 0; i < kAcceptsPerWake; ++i) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      admit(fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    // Out of descriptors (or memory): the listener stays readable, so waiting
    // on it now would spin. Pause; open connections are served meanwhile.
    uv_poll_stop(&listener_);
    uv_timer_start(&resume_, on_resume, kAcceptPauseMs, 0);
    ++s_pauses_;
    break;
  }
  publish();
}

void TcpStoreServer::Loop::admit(int fd) {
  if (conns_.size() >= static_cast<size_t>(limits_.max_connections)) {
    if (handshaking_.empty()) {
      close(fd);
      ++s_rejected_;
      return;
    }
    close_conn(handshaking_.front(), true);  // the oldest stranger makes room
  }
  auto nonce = random_nonce();
  auto* c = new Conn();
  c->loop = this;
  c->id = next_id_++;
  c->accepted_at = SteadyClock::now();
  uv_tcp_init(&loop_, &c->tcp);
  c->tcp.data = c;
  if (!nonce.is_ok() || uv_tcp_open(&c->tcp, fd) != 0) {
    close(fd);
    ++s_rejected_;
    c->closing = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), on_conn_closed);
    return;
  }
  uv_tcp_nodelay(&c->tcp, 1);
  c->nonce = nonce.value();
  conns_[c->id] = c;
  c->handshaking = handshaking_.insert(handshaking_.end(), c);
  store_wire::StoreGreeting greeting{store_wire::kMagic, store_wire::kVersion, 0, c->nonce};
  send_bytes(c, std::string(reinterpret_cast<const char*>(&greeting), sizeof(greeting)));
  uv_read_start(reinterpret_cast<uv_stream_t*>(&c->tcp), on_alloc, on_read);
}

void TcpStoreServer::Loop::on_sweep(uv_timer_t* t) {
  auto* self = static_cast<Loop*>(t->data);
  const auto limit = SteadyClock::now() - std::chrono::milliseconds(self->limits_.handshake_timeout_ms);
  while (!self->handshaking_.empty() && self->handshaking_.front()->accepted_at <= limit)
    self->close_conn(self->handshaking_.front(), true);
  self->publish();
}

void TcpStoreServer::Loop::on_alloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  // One buffer for all: on_read consumes every chunk before the next read.
  auto* self = static_cast<Conn*>(h->data)->loop;
  *buf = uv_buf_init(self->read_buf_, sizeof(self->read_buf_));
}

void TcpStoreServer::Loop::on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* c = static_cast<Conn*>(s->data);
  Loop* self = c->loop;
  if (n < 0) {
    self->close_conn(c, false);
  } else if (uv_stream_get_write_queue_size(s) > kMaxUnreadReplyBytes) {
    self->close_conn(c, true);  // it sends on and on but does not read its replies
  } else if (n > 0) {
    self->feed(c, buf->base, static_cast<size_t>(n));
  }
  self->publish();
}

void TcpStoreServer::Loop::send(Conn* c, Write* w, const uv_buf_t* bufs, unsigned count) {
  w->conn = c;
  w->req.data = w;
  in_flight_ += w->size;
  if (uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&c->tcp), bufs, count, on_written) != 0) {
    in_flight_ -= w->size;
    delete w;
    close_conn(c, false);
  }
}

void TcpStoreServer::Loop::send_bytes(Conn* c, std::string bytes) {
  auto* w = new Write();
  w->bytes = std::move(bytes);
  w->size = w->bytes.size();
  uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned>(w->bytes.size()));
  send(c, w, &buf, 1);
}

void TcpStoreServer::Loop::send_reply(Conn* c, ReplyStatus status, std::shared_ptr<const std::string> payload) {
  auto* w = new Write();
  w->header = {store_wire::kReplyMagic, static_cast<uint8_t>(status), {0, 0, 0}, payload->size()};
  w->payload = std::move(payload);
  w->size = sizeof(w->header) + w->payload->size();
  if (c->phase == Phase::kWaiting) c->phase = Phase::kHeader;
  uv_buf_t bufs[2] = {uv_buf_init(reinterpret_cast<char*>(&w->header), sizeof(w->header)),
                      uv_buf_init(const_cast<char*>(w->payload->data()), static_cast<unsigned>(w->payload->size()))};
  send(c, w, bufs, w->payload->empty() ? 1 : 2);
}

void TcpStoreServer::Loop::on_written(uv_write_t* req, int status) {
  auto* w = static_cast<Write*>(req->data);
  Conn* c = w->conn;
  Loop* self = c->loop;
  self->in_flight_ -= w->size;
  delete w;
  if (!c->closing && status != 0) self->close_conn(c, false);
  self->publish();
}

void TcpStoreServer::Loop::close_conn(Conn* c, bool rejected) {
  if (c->closing) return;
  c->closing = true;
  if (c->phase == Phase::kProof) handshaking_.erase(c->handshaking);
  conns_.erase(c->id);
  state_.drop(c->id);
  in_flight_ -= c->reserved;
  c->reserved = 0;
  if (rejected) ++s_rejected_;
  uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), on_conn_closed);
}

void TcpStoreServer::Loop::on_conn_closed(uv_handle_t* h) { delete static_cast<Conn*>(h->data); }

Result<std::unique_ptr<TcpStoreServer>> TcpStoreServer::start(const SocketAddress& where, const JobToken& token,
                                                              const StoreLimits& limits) {
  auto fd = listen_on(where, 4096);
  if (!fd.is_ok()) return fd.status().with_context("rendezvous store: ");
  auto addr = local_address(fd.value());
  if (!addr.is_ok()) {
    close(fd.value());
    return addr.status();
  }
  auto loop = std::make_unique<Loop>(token, limits);
  Status opened = loop->open(fd.value());
  if (!opened.is_ok()) {
    close(fd.value());
    return opened;
  }
  return std::unique_ptr<TcpStoreServer>(new TcpStoreServer(std::move(loop), addr.value()));
}

TcpStoreServer::TcpStoreServer(std::unique_ptr<Loop> loop, SocketAddress address)
    : loop_(std::move(loop)), address_(std::move(address)) {
  loop_->start();
}

TcpStoreServer::~TcpStoreServer() { loop_->stop(); }

StoreStats TcpStoreServer::stats() const { return loop_->stats(); }

void TcpStoreServer::post_abort(int rank, const std::string& message) { loop_->post_abort(rank, message); }

}  // namespace omnib
