#include "baselines/gloo/gloo_context.h"

#include <algorithm>
#include <cctype>

#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/config.h>
#include <gloo/transport/tcp/device.h>
#if GLOO_HAVE_TRANSPORT_IBVERBS
#include <gloo/transport/ibverbs/device.h>
#endif

namespace omnib {
namespace {

bool mentions_timeout(const std::string& message) {
  std::string lower(message);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower.find("timeout") != std::string::npos || lower.find("timed out") != std::string::npos;
}

}  // namespace

void GlooStoreAdapter::fail(const Status& s) {
  if (first_failure_.is_ok()) first_failure_ = s;
  throw gloo::IoException("omni-bench store: " + s.message());
}

void GlooStoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  Status s = store_.set(prefix_ + key, std::string(data.begin(), data.end()));
  if (!s.is_ok()) fail(s);
}

std::vector<char> GlooStoreAdapter::get(const std::string& key) {
  auto value = store_.get(prefix_ + key);
  if (!value.is_ok()) fail(value.status());
  return std::vector<char>(value.value().begin(), value.value().end());
}

void GlooStoreAdapter::wait(const std::vector<std::string>& keys) {
  for (const auto& key : keys) {
    auto value = store_.get(prefix_ + key);
    if (!value.is_ok()) fail(value.status());
  }
}

void GlooStoreAdapter::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) { wait(keys); }

Status run_gloo_guarded(const std::string& what, const std::function<void()>& fn) {
  try {
    fn();
    return Status::ok();
  } catch (const gloo::IoException& e) {
    if (mentions_timeout(e.what()))
      return timeout_error(what + " timed out (a peer is dead or stuck; raise --timeout if it is only slow): " +
                           e.what());
    return unavailable_error(what + " failed in Gloo's transport (did a peer exit?): " + e.what());
  } catch (const std::exception& e) {
    return unavailable_error(what + " failed in Gloo: " + e.what());
  }
}

std::vector<std::string> gloo_verbs_devices() {
#if GLOO_HAVE_TRANSPORT_IBVERBS
  return gloo::transport::ibverbs::getDeviceNames();
#else
  return {};
#endif
}

Result<std::shared_ptr<gloo::Context>> connect_gloo_context(const CollectiveSetup& setup, const std::string& tag,
                                                            int base, const GlooTransport& transport) {
  if (setup.gloo.store == nullptr) return internal_error("Gloo baselines need setup.gloo.store for their rendezvous");
  const int rank = setup.job.rank;
  GlooStoreAdapter store(*setup.gloo.store, "gloo/" + std::to_string(setup.gloo.job_id) + "/" + tag + "/");
  std::shared_ptr<gloo::rendezvous::Context> context;
  Status s = run_gloo_guarded("connecting the Gloo context '" + tag + "' over the " + transport.name(), [&] {
    std::shared_ptr<gloo::transport::Device> device;
#if GLOO_HAVE_TRANSPORT_IBVERBS
    if (transport.ibverbs) device = gloo::transport::ibverbs::CreateDevice({transport.device, 1, 0});
#endif
    if (!device) {
      gloo::transport::tcp::attr attr;
      attr.hostname = setup.gloo.bind_host;
      device = gloo::transport::tcp::CreateDevice(attr);
    }
    context = std::make_shared<gloo::rendezvous::Context>(rank, setup.job.nodes, base);
    context->setTimeout(setup.timeout);
    context->connectFullMesh(store, device);
  });
  // A store failure is the root cause; its code (a timeout, say) wins.
  if (!store.first_failure().is_ok())
    return store.first_failure().with_context("Gloo rendezvous '" + tag + "': ");
  if (!s.is_ok()) return s;
  return std::shared_ptr<gloo::Context>(std::move(context));
}

}  // namespace omnib
