#include "tools/config/transport_identity.h"

namespace omnib {
namespace {

constexpr const char* kFabricPrefix = "fabric/";

}  // namespace

std::string fabric_transport_identity(const std::string& provider) { return kFabricPrefix + provider; }

std::vector<std::string> transport_args(const std::string& identity) {
  if (identity == "tcp") return {};
  if (identity.rfind(kFabricPrefix, 0) == 0)
    return {"--transport", "fabric", "--fabric-provider", identity.substr(std::string(kFabricPrefix).size())};
  return {"--transport", identity};
}

}  // namespace omnib
