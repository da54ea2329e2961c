#include "tools/config/run_config.h"

#include <chrono>
#include <cstdio>
#include <sstream>

#include "tools/common/json_fields.h"
#include "tools/config/transport_identity.h"
#include "tools/config/link_shape.h"
#include "tools/common/size_parse.h"

namespace omnib {
namespace {

using nlohmann::json;

// One identity field: how it is written and read. A file of a schema older
// than `since` may lack it: then it takes `before` (what every run of that
// time did), or the default when `before` is null.
struct Field {
  const char* name;
  int since;
  json (*get)(const RunConfig&);
  Status (*set)(RunConfig&, const json&);
  const char* before = nullptr;
};

template <typename T>
Status read_into(const json& j, const char* name, T& out) {
  return read_field(j, name, out);
}

// A field that names one of an engine vocabulary's values (`parse` reads it).
template <typename E>
Status read_name(const json& j, const char* name, bool (*parse)(const std::string&, E*), E& out) {
  std::string text;
  OMNIB_RETURN_IF_ERROR(read_field(j, name, text));
  if (!parse(text, &out)) return usage_error(std::string("field '") + name + "': '" + text + "' is not known to this build");
  return Status::ok();
}

Status read_dtype(const json& j, RunConfig& c) {
  std::string text;
  OMNIB_RETURN_IF_ERROR(read_field(j, "dtype", text));
  auto t = parse_dtype(text);
  if (!t) return usage_error("field 'dtype': '" + text + "' is not a type this build knows");
  c.dtype = *t;
  return Status::ok();
}

Status read_device(const json& j, RunConfig& c) {
  std::string text;
  OMNIB_RETURN_IF_ERROR(read_field(j, "device", text));
  if (text != "cpu" && text != "cuda") return usage_error("field 'device': '" + text + "' is neither cpu nor cuda");
  c.device = text == "cpu" ? DeviceKind::kCpu : DeviceKind::kCuda;
  return Status::ok();
}

const Field kFields[] = {
    {"collective", 1, [](const RunConfig& c) { return json(c.collective); },
     [](RunConfig& c, const json& j) { return read_into(j, "collective", c.collective); }},
    {"size_bytes", 1, [](const RunConfig& c) { return json(c.size_bytes); },
     [](RunConfig& c, const json& j) { return read_into(j, "size_bytes", c.size_bytes); }},
    {"dtype", 1, [](const RunConfig& c) { return json(std::string(dtype_name(c.dtype))); },
     [](RunConfig& c, const json& j) { return read_dtype(j, c); }},
    {"density", 1, [](const RunConfig& c) { return json(c.density); },
     [](RunConfig& c, const json& j) { return read_into(j, "density", c.density); }},
    {"block_size", 1, [](const RunConfig& c) { return json(c.block_size); },
     [](RunConfig& c, const json& j) { return read_into(j, "block_size", c.block_size); }},
    {"nodes", 1, [](const RunConfig& c) { return json(c.nodes); },
     [](RunConfig& c, const json& j) { return read_into(j, "nodes", c.nodes); }},
    {"aggregators", 1, [](const RunConfig& c) { return json(c.aggregators); },
     [](RunConfig& c, const json& j) { return read_into(j, "aggregators", c.aggregators); }},
    {"overlap", 1, [](const RunConfig& c) { return json(c.overlap); },
     [](RunConfig& c, const json& j) { return read_into(j, "overlap", c.overlap); }},
    {"workload", 1, [](const RunConfig& c) { return json(c.workload); },
     [](RunConfig& c, const json& j) { return read_into(j, "workload", c.workload); }},
    {"seed", 1, [](const RunConfig& c) { return json(c.seed); },
     [](RunConfig& c, const json& j) { return read_into(j, "seed", c.seed); }},
    {"device", 1, [](const RunConfig& c) { return json(std::string(device_name(c.device))); },
     [](RunConfig& c, const json& j) { return read_device(j, c); }},
    {"inplace", 1, [](const RunConfig& c) { return json(c.inplace); },
     [](RunConfig& c, const json& j) { return read_into(j, "inplace", c.inplace); }},
    {"net", 2, [](const RunConfig& c) { return json(c.net); },
     [](RunConfig& c, const json& j) { return read_into(j, "net", c.net); }},
    {"link_rate_bps", 2, [](const RunConfig& c) { return json(c.link_rate_bps); },
     [](RunConfig& c, const json& j) { return read_into(j, "link_rate_bps", c.link_rate_bps); }},
    {"link_delay_ns", 2, [](const RunConfig& c) { return json(c.link_delay_ns); },
     [](RunConfig& c, const json& j) { return read_into(j, "link_delay_ns", c.link_delay_ns); }},
    {"transport", 2, [](const RunConfig& c) { return json(c.transport); },
     [](RunConfig& c, const json& j) { return read_into(j, "transport", c.transport); }},
    // Runs before the striped layout split shards contiguously, and sent whole blocks.
    {"shard_layout", 4, [](const RunConfig& c) { return json(shard_layout_name(c.shard_layout)); },
     [](RunConfig& c, const json& j) { return read_name(j, "shard_layout", parse_shard_layout, c.shard_layout); },
     "contiguous"},
    {"encoding", 4, [](const RunConfig& c) { return json(encoding_policy_name(c.encoding)); },
     [](RunConfig& c, const json& j) { return read_name(j, "encoding", parse_encoding_policy, c.encoding); },
     "blocks"},
    // Runs before the direct route sent every non-zero through the shards.
    {"route", 5, [](const RunConfig& c) { return json(route_policy_name(c.route)); },
     [](RunConfig& c, const json& j) { return read_name(j, "route", parse_route_policy, c.route); }, "shards"},
    // Runs before --gpu-sync left CUDA's default: spin.
    {"gpu_sync", 6, [](const RunConfig& c) { return json(gpu_sync_name(c.gpu_sync)); },
     [](RunConfig& c, const json& j) { return read_name(j, "gpu_sync", parse_gpu_sync, c.gpu_sync); }, "spin"},
    // Runs before `simulate` were measured, on no simulated platform.
    {"topology", 7, [](const RunConfig& c) { return json(c.topology); },
     [](RunConfig& c, const json& j) { return read_into(j, "topology", c.topology); }},
    // Runs before --tcp-cc did not record it: "" (their ranks ran the host's default, unnamed).
    {"tcp_cc", 8, [](const RunConfig& c) { return json(c.tcp_cc); },
     [](RunConfig& c, const json& j) { return read_into(j, "tcp_cc", c.tcp_cc); }},
    // Runs before --tcp-idle-restart did not set it: "" (their ranks ran the namespace's default, unnamed).
    {"tcp_idle_restart", 9, [](const RunConfig& c) { return json(c.tcp_idle_restart); },
     [](RunConfig& c, const json& j) { return read_into(j, "tcp_idle_restart", c.tcp_idle_restart); }},
};

// Schema 1 sweep files named the emulated rate of a point as a string.
Status read_legacy_link_rate(const json& j, RunConfig& c, std::vector<std::string>* defaulted) {
  std::string rate;
  bool present = false;
  OMNIB_RETURN_IF_ERROR(read_optional_field(j, "link_rate", rate, &present));
  if (!present || rate.empty()) return Status::ok();
  auto bps = parse_link_rate(rate);
  if (!bps.is_ok()) return bps.status().with_context("field 'link_rate': ");
  c.net = "emulate";
  c.link_rate_bps = bps.value();
  std::erase(*defaulted, std::string("net"));
  std::erase(*defaulted, std::string("link_rate_bps"));
  return Status::ok();
}

std::string shortest(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  // Prefer the short form when it reads back as the same double.
  char short_buf[40];
  std::snprintf(short_buf, sizeof(short_buf), "%g", v);
  return std::strtod(short_buf, nullptr) == v ? short_buf : buf;
}

}  // namespace

const std::vector<std::string>& identity_fields() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Field& f : kFields) n.emplace_back(f.name);
    return n;
  }();
  return names;
}

json RunConfig::key() const {
  json j = json::object();
  for (const Field& f : kFields) j[f.name] = f.get(*this);
  return j;
}

nlohmann::json omitted_defaults() {
  const RunConfig d;
  json all = d.key();
  json out = json::object();
  for (const char* name : {"collective", "aggregators", "seed", "inplace", "net", "link_rate_bps", "link_delay_ns",
                           "transport", "shard_layout", "encoding", "route", "gpu_sync", "topology", "tcp_cc",
                           "tcp_idle_restart"})
    out[name] = all[name];
  return out;
}

std::string RunConfig::label() const {
  std::ostringstream s;
  if (collective != "allreduce") s << collective << " ";
  s << format_size(size_bytes) << " " << dtype_name(dtype) << " density " << shortest(density) << " block "
    << block_size << " nodes " << nodes;
  if (aggregators) s << " aggregators " << aggregators;
  s << " overlap " << overlap << " " << workload;
  if (seed != 1) s << " seed " << seed;
  s << " " << device_name(device);
  if (inplace) s << " inplace";
  if (net != "loopback") {
    s << " " << net;
    if (!topology.empty()) s << " " << topology;
    s << " " << format_link_rate(link_rate_bps);
    if (link_delay_ns) s << " " << format_link_delay(std::chrono::nanoseconds(link_delay_ns));
    if (!tcp_cc.empty()) s << " tcp " << tcp_cc;
    if (!tcp_idle_restart.empty()) s << " idle-restart " << tcp_idle_restart;
  }
  if (transport != "tcp") s << " transport " << transport;
  if (shard_layout != RunConfig{}.shard_layout) s << " shards " << shard_layout_name(shard_layout);
  if (encoding != RunConfig{}.encoding) s << " encoding " << encoding_policy_name(encoding);
  if (route != RunConfig{}.route) s << " route " << route_policy_name(route);
  if (gpu_sync != RunConfig{}.gpu_sync) s << " gpu-sync " << gpu_sync_name(gpu_sync);
  return s.str();
}

std::vector<std::string> RunConfig::allreduce_args() const {
  std::vector<std::string> a{"-b",          std::to_string(size_bytes), "-e",          std::to_string(size_bytes),
                             "-d",          std::string(dtype_name(dtype)), "--density", shortest(density),
                             "--block-size", std::to_string(block_size), "--nodes",     std::to_string(nodes),
                             "--aggregators", std::to_string(aggregators), "--overlap", overlap,
                             "--workload",  workload,                     "--seed",      std::to_string(seed),
                             "--device",    std::string(device_name(device))};
  if (inplace) a.push_back("--inplace");
  if (net == "emulate") {
    a.insert(a.end(), {"--net", "emulate", "--link-rate", std::to_string(link_rate_bps) + "bit", "--link-delay",
                       std::to_string(link_delay_ns) + "ns"});
    if (!tcp_cc.empty()) a.insert(a.end(), {"--tcp-cc", tcp_cc});
    if (!tcp_idle_restart.empty()) a.insert(a.end(), {"--tcp-idle-restart", tcp_idle_restart});
  }
  const std::vector<std::string> how = transport_args(transport);
  a.insert(a.end(), how.begin(), how.end());
  a.insert(a.end(), {"--shard-layout", shard_layout_name(shard_layout), "--encoding", encoding_policy_name(encoding),
                     "--route", route_policy_name(route)});
  // --gpu-sync is a usage error with --device cpu.
  if (device == DeviceKind::kCuda) a.insert(a.end(), {"--gpu-sync", gpu_sync_name(gpu_sync)});
  return a;
}

Result<RunConfig> run_config_from_json(const json& j, int schema_version, std::vector<std::string>* defaulted) {
  if (!j.is_object()) return usage_error("a configuration must be a JSON object");
  RunConfig c;
  std::vector<std::string> missing;
  for (const Field& f : kFields) {
    if (!j.contains(f.name) && schema_version < f.since) {
      missing.emplace_back(f.name);
      if (f.before) OMNIB_RETURN_IF_ERROR(f.set(c, json{{f.name, f.before}}));
      continue;
    }
    OMNIB_RETURN_IF_ERROR(f.set(c, j));
  }
  if (schema_version < 2) OMNIB_RETURN_IF_ERROR(read_legacy_link_rate(j, c, &missing));
  if (c.net != "loopback" && c.net != "emulate" && c.net != "simulate")
    return usage_error("field 'net': '" + c.net + "' is none of loopback, emulate and simulate");
  if (defaulted) defaulted->insert(defaulted->end(), missing.begin(), missing.end());
  return c;
}

OmniSettings omni_settings(const RunConfig& c) {
  return OmniSettings{c.block_size, c.shard_layout, c.encoding, c.route, c.link_rate_bps};
}

}  // namespace omnib
