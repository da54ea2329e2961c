// What every Gloo baseline shares: Gloo's rendezvous over our Store, a
// full-mesh Gloo context over one of Gloo's own transports (TCP, or ibverbs
// with --transport fabric where a verbs device exists), and the translation
// of Gloo's exceptions into Status values.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gloo/context.h>
#include <gloo/rendezvous/store.h>

#include "baselines/gloo/gloo_catalog.h"
#include "engine/store/store.h"
#include "engine/collective/collective.h"
#include "engine/base/status.h"

namespace omnib {

// gloo::rendezvous::Store backed by an omnib::Store. Every key gets `prefix`
// so Gloo's keys ("rank_0", ...) never meet ours. Gloo wants exceptions from
// a store; this throws gloo::IoException and keeps the first failing Status
// so the caller can report it with its own code (a timeout stays a timeout).
// Called only from the thread that connects the context.
class GlooStoreAdapter final : public gloo::rendezvous::Store {
 public:
  GlooStoreAdapter(omnib::Store& store, std::string prefix) : store_(store), prefix_(std::move(prefix)) {}

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  // Our store's get already waits (up to its own timeout, which the harness
  // sets from --timeout as well).
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  const Status& first_failure() const { return first_failure_; }

 private:
  [[noreturn]] void fail(const Status& s);

  omnib::Store& store_;
  std::string prefix_;
  Status first_failure_;
};

// The verbs devices Gloo sees on this host.
std::vector<std::string> gloo_verbs_devices();

// Connects the worker ranks [0, setup.job.nodes) into one Gloo context over
// `transport` (TCP listens on setup.gloo.bind_host), with setup.timeout for
// every Gloo wait. `tag` names this context's keys in the store (every worker
// passes the same tag, and a tag is used once per job). `base` is the group
// size AllreduceBcube reads from the context. Blocks until every worker has
// connected; call only on worker ranks.
Result<std::shared_ptr<gloo::Context>> connect_gloo_context(const CollectiveSetup& setup, const std::string& tag,
                                                            int base, const GlooTransport& transport);

// Runs `fn`, turning whatever Gloo throws into a Status naming `what`:
// kTimeout for Gloo's I/O timeouts, kUnavailable otherwise. (The harness
// prefixes the rank and the algorithm.)
Status run_gloo_guarded(const std::string& what, const std::function<void()>& fn);

}  // namespace omnib
