#include "engine/transport/fabric/fabric_device.h"

namespace omnib {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string fabric_address_text(const FabricEndpoint& endpoint) {
  std::string out = endpoint.provider() + "|";
  for (unsigned char c : endpoint.address()) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

Result<std::string> parse_fabric_address(const std::string& text, const std::string& my_provider, int rank) {
  const std::string key = "the store's fabric-addr/" + std::to_string(rank);
  const size_t bar = text.rfind('|');
  if (bar == std::string::npos) return unavailable_error(key + " is not a fabric address");
  const std::string provider = text.substr(0, bar);
  if (provider != my_provider)
    return unavailable_error("rank " + std::to_string(rank) + " opened libfabric provider " + provider +
                             ", this rank " + my_provider +
                             ": give every rank the same --fabric-provider (and the same FI_PROVIDER)");
  const std::string hex = text.substr(bar + 1);
  if (hex.empty() || hex.size() % 2 || hex.size() / 2 > fabric_wire::kMaxAddressBytes)
    return unavailable_error(key + " holds an address of the wrong length");
  std::string raw;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_value(hex[i]), lo = hex_value(hex[i + 1]);
    if (hi < 0 || lo < 0) return unavailable_error(key + " is not hexadecimal");
    raw += static_cast<char>(hi << 4 | lo);
  }
  return raw;
}

Result<std::unique_ptr<FabricDevice>> FabricDevice::open(const std::string& provider, const DeviceContext& context) {
  auto endpoint = FabricEndpoint::open(provider, context.bind_host);
  if (!endpoint.is_ok()) return endpoint.status().with_context("rank " + std::to_string(context.rank) + ": ");
  std::unique_ptr<FabricDevice> d(new FabricDevice(context, endpoint.take()));
  d->opener_->start();
  OMNIB_RETURN_IF_ERROR(
      context.store->set("fabric-addr/" + std::to_string(context.rank), fabric_address_text(*d->endpoint_)));
  return d;
}

FabricDevice::~FabricDevice() { endpoint_->shutdown(); }

Result<std::string> FabricDevice::peer_address(int rank) {
  auto it = peer_addresses_.find(rank);
  if (it != peer_addresses_.end()) return it->second;
  auto text = context_.store->get("fabric-addr/" + std::to_string(rank));
  if (!text.is_ok()) return text.status().with_context("looking up rank " + std::to_string(rank) + ": ");
  auto raw = parse_fabric_address(text.value(), endpoint_->provider(), rank);
  if (!raw.is_ok()) return raw.status();
  return peer_addresses_.emplace(rank, raw.take()).first->second;
}

Status FabricDevice::dial(const HelloClaim& claim, int acceptor, SteadyClock::time_point deadline) {
  auto address = peer_address(acceptor);
  if (!address.is_ok()) return address.status();
  opener_->dial(claim, acceptor, address.value());
  return Status::ok();
}

Result<std::optional<OpenedLink>> FabricDevice::next_link(SteadyClock::time_point deadline) {
  return opener_->next_link(deadline);
}

}  // namespace omnib
