// The identity of a measurement: every field that makes two measurements of
// one algorithm comparable, defined once. Result records embed it; `compare`
// matches records by key(); `sweep` resumes by key(); result files list
// identity_fields() so that `plot` groups by them; docs/json-schema.md
// documents the same list (a test checks that the two agree).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/blocks/block_layout.h"
#include "engine/base/status.h"
#include "engine/base/tensor.h"
#include "engine/omni/settings/omni_settings.h"
#include "tools/config/gpu_sync.h"

namespace omnib {

struct RunConfig {
  std::string collective = "allreduce";
  uint64_t size_bytes = 0;  // per rank, whole elements
  DType dtype = DType::kFloat32;
  double density = 0.1;  // element density asked for (or fixed by the workload)
  uint64_t block_size = kDefaultBlockSize;
  int nodes = 4;
  int aggregators = 0;  // dedicated aggregator ranks; 0: shards colocated with workers
  std::string overlap = "random";
  std::string workload = "blocks";  // the generator's label (e.g. "zipf:1.1", "preset:vgg19")
  uint64_t seed = 1;
  DeviceKind device = DeviceKind::kCpu;
  bool inplace = false;
  std::string net = "loopback";  // or "emulate", or "simulate" (omni-bench simulate)
  uint64_t link_rate_bps = 0;    // emulate and simulate: every link's rate, each way
  uint64_t link_delay_ns = 0;    // emulate and simulate: every link's one-way delay
  std::string transport = "tcp";
  std::string tcp_cc;  // emulate only: the ranks' TCP congestion control (tools/net/tcp_congestion.h); "" otherwise
  std::string tcp_idle_restart;  // emulate only: "on" or "off", the ranks' slow start after idle (tools/net/rank_tcp.h)
  ShardLayout shard_layout = ShardLayout::kStriped;  // how the engine deals blocks to shards (engine/blocks/shard_map.h)
  EncodingPolicy encoding = EncodingPolicy::kAuto;   // how the engine encodes blocks (engine/omni/settings/encoding_policy.h)
  RoutePolicy route = RoutePolicy::kAuto;            // how the omni engine sends non-zeros (engine/omni/settings/route_policy.h)
  GpuSync gpu_sync = GpuSync::kSpin;                 // how workers wait for their GPU (tools/config/gpu_sync.h)
  std::string topology;  // simulate only: the simulated platform (tools/simulate/platform_spec.h); "" otherwise

  uint64_t count() const { return size_bytes / dtype_size(dtype); }

  // The identity fields as a JSON object of canonical values; equal keys
  // mean comparable measurements.
  nlohmann::json key() const;
  std::string key_text() const { return key().dump(); }
  // "4M float density 0.01 block 256 nodes 4 overlap random blocks cpu":
  // the fields every configuration has, then those that differ from the
  // defaults (aggregators, in place, emulated links, ...).
  std::string label() const;
  // `omni-bench allreduce` arguments that measure this configuration again
  // (sizes as -b/-e; everything in the key spelled out).
  std::vector<std::string> allreduce_args() const;
};

// The omni engine's settings for a run of this configuration.
OmniSettings omni_settings(const RunConfig& c);

// The names of the identity fields, in the order key() and the schema doc use.
const std::vector<std::string>& identity_fields();

// The fields label() leaves out when they hold their default, with those
// defaults (result files carry them, so that plots title alike).
nlohmann::json omitted_defaults();

// Reads a configuration: from a record's "config" object (schema 2, every
// field required), or from the top level of a schema 1 record, which lacks
// the newer fields: those take their defaults and their names are appended to
// `defaulted`. Every field is type-checked; the error names the field.
Result<RunConfig> run_config_from_json(const nlohmann::json& j, int schema_version,
                                       std::vector<std::string>* defaulted);

}  // namespace omnib
