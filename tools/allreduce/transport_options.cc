#include "tools/allreduce/transport_options.h"

#include "engine/links/open_transport.h"
#include "tools/config/transport_identity.h"

namespace omnib {

void bind_transport_options(CLI::App& cmd, TransportOptions& o) {
  cmd.add_option("--transport", o.transport,
                 "how our algorithms move bytes: tcp (kernel sockets), or fabric (libfabric: verbs, EFA, tcp, shm; "
                 "docs/transports.md)")
      ->capture_default_str()
      ->group("Network");
  cmd.add_option("--fabric-provider", o.provider,
                 "libfabric provider for --transport fabric, in libfabric's names (verbs;ofi_rxm, efa, tcp;ofi_rxm, "
                 "shm; tcp and verbs mean their reliable-datagram stacks); default: libfabric's first offer")
      ->group("Network");
}

Result<TransportChoice> resolve_transport(const TransportOptions& o, bool emulate) {
  TransportChoice choice;
  if (o.transport == "tcp") {
    if (!o.provider.empty())
      return usage_error("--fabric-provider " + o.provider +
                         " picks a libfabric provider for --transport fabric: "
                         "add --transport fabric, or drop --fabric-provider");
    return choice;
  }
  if (o.transport != "fabric") return usage_error("--transport '" + o.transport + "' is not known: use tcp or fabric");
  choice.kind = TransportChoice::Kind::kFabric;
  auto provider = fabric_provider_for(o.provider);
  if (!provider.is_ok()) return provider.status();
  choice.provider = provider.take();
  if (emulate && (choice.provider == "shm" || choice.provider.find(";shm") != std::string::npos))
    return usage_error("--fabric-provider " + choice.provider +
                       " moves bytes through shared memory, never over the "
                       "emulated links of --net emulate: use --fabric-provider tcp there");
  return choice;
}

std::string transport_identity(const TransportChoice& choice) {
  return choice.kind == TransportChoice::Kind::kTcp ? "tcp" : fabric_transport_identity(choice.provider);
}

}  // namespace omnib
