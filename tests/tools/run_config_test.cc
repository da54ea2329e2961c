#include "tools/config/run_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "engine/links/open_transport.h"
#include "tools/allreduce/allreduce_options.h"
#include "tools/allreduce/run_plan.h"

namespace omnib {
namespace {

using nlohmann::json;

RunConfig emulated() {
  RunConfig c;
  c.size_bytes = 1000000;
  c.density = 0.013;
  c.block_size = 64;
  c.nodes = 3;
  c.aggregators = 2;
  c.overlap = "0.25";
  c.workload = "zipf:1.3";
  c.seed = 7;
  c.inplace = true;
  c.dtype = DType::kInt32;
  c.net = "emulate";
  c.link_rate_bps = 50'000'000;
  c.link_delay_ns = 5000;
  c.tcp_cc = "reno";  // every kernel has it built in
  c.tcp_idle_restart = "off";
  return c;
}

TEST(RunConfig, KeyRoundTripsThroughJson) {
  const RunConfig c = emulated();
  std::vector<std::string> defaulted;
  auto back = run_config_from_json(c.key(), 2, &defaulted);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back.value().key_text(), c.key_text());
  EXPECT_TRUE(defaulted.empty());
}

// The 16-bit types: named "bf16" and "half" in the key and the label, 2-byte
// elements, and planned again from their arguments.
TEST(RunConfig, SixteenBitTypesRoundTrip) {
  for (DType t : {DType::kBFloat16, DType::kFloat16}) {
    RunConfig c;
    c.size_bytes = 4 << 20;
    c.dtype = t;
    SCOPED_TRACE(std::string(dtype_name(t)));
    EXPECT_EQ(c.count(), 2u << 20);
    EXPECT_EQ(c.key()["dtype"], std::string(dtype_name(t)));
    EXPECT_NE(c.label().find(std::string("4M ") + std::string(dtype_name(t))), std::string::npos) << c.label();
    auto back = run_config_from_json(c.key(), 2, nullptr);
    ASSERT_TRUE(back.is_ok()) << back.status().message();
    EXPECT_EQ(back.value().dtype, t);
    CLI::App app;
    AllreduceOptions o;
    bind_allreduce_options(app, o);
    const auto args = c.allreduce_args();
    ASSERT_NO_THROW(app.parse(std::vector<std::string>(args.rbegin(), args.rend())));
    auto plan = plan_allreduce(o, 1, std::nullopt);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    EXPECT_EQ(plan.value().config(0).key_text(), c.key_text());
  }
  EXPECT_EQ(parse_dtype("bfloat16"), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("fp16"), DType::kFloat16);
  EXPECT_FALSE(parse_dtype("fp8").has_value());
}

// A value of `field` other than `v` that a file may hold.
std::string another_value(const std::string& field, const std::string& v) {
  if (field == "dtype") return v == "float" ? "int32" : "float";
  if (field == "device") return v == "cuda" ? "cpu" : "cuda";
  if (field == "net") return v == "loopback" ? "emulate" : "loopback";
  if (field == "shard_layout") return v == "striped" ? "contiguous" : "striped";
  if (field == "encoding") return v == "coo" ? "bitmap" : "coo";
  if (field == "route") return v == "direct" ? "shards" : "direct";
  if (field == "gpu_sync") return v == "blocking" ? "spin" : "blocking";
  return "other";
}

TEST(RunConfig, EveryIdentityFieldTellsConfigurationsApart) {
  const RunConfig base = emulated();
  for (const auto& field : identity_fields()) {
    json changed = base.key();
    json& v = changed[field];
    if (v.is_string()) v = another_value(field, v.get<std::string>());
    else if (v.is_boolean()) v = !v.get<bool>();
    else if (v.is_number_float()) v = v.get<double>() + 0.5;
    else v = v.get<uint64_t>() + 1;
    auto c = run_config_from_json(changed, 2, nullptr);
    ASSERT_TRUE(c.is_ok()) << field << ": " << c.status().message();
    EXPECT_NE(c.value().key_text(), base.key_text()) << field;
  }
}

TEST(RunConfig, EngineNamesAreReadOnceAndUnknownOnesRefused) {
  for (const char* field : {"shard_layout", "encoding", "route", "gpu_sync"}) {
    json changed = emulated().key();
    changed[field] = "other";
    auto c = run_config_from_json(changed, 6, nullptr);
    ASSERT_FALSE(c.is_ok()) << field;
    EXPECT_NE(c.status().message().find(std::string("field '") + field + "': 'other' is not known"), std::string::npos)
        << c.status().message();
  }
}

TEST(RunConfig, SchemaOneRecordsTakeDefaultsAndSaySo) {
  json old = emulated().key();
  for (const char* newer : {"net", "link_rate_bps", "link_delay_ns", "transport", "shard_layout", "encoding"}) old.erase(newer);
  std::vector<std::string> defaulted;
  auto c = run_config_from_json(old, 1, &defaulted);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c.value().net, "loopback");
  EXPECT_EQ(defaulted, (std::vector<std::string>{"net", "link_rate_bps", "link_delay_ns", "transport", "shard_layout", "encoding"}));
  // Sweep files of schema 1 named the emulated rate as text.
  old["link_rate"] = "100mbit";
  defaulted.clear();
  c = run_config_from_json(old, 1, &defaulted);
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(c.value().net, "emulate");
  EXPECT_EQ(c.value().link_rate_bps, 100'000'000u);
  EXPECT_EQ(defaulted, (std::vector<std::string>{"link_delay_ns", "transport", "shard_layout", "encoding"}));
  // Schema 2 requires every field.
  EXPECT_FALSE(run_config_from_json(old, 2, nullptr).is_ok());
}

// A configuration without `field`, read from a file of `schema`, which may
// lack it: it must load, and say that the field took its value of the time;
// a file of the next schema must name it.
RunConfig loaded_without(const char* field, int schema) {
  json old = emulated().key();
  old.erase(field);
  std::vector<std::string> defaulted;
  auto c = run_config_from_json(old, schema, &defaulted);
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(defaulted, (std::vector<std::string>{field}));
  EXPECT_FALSE(run_config_from_json(old, schema + 1, nullptr).is_ok()) << field;
  return c.is_ok() ? c.value() : RunConfig{};
}

// Schema 4 files predate the direct route: every omni call went through the shards.
TEST(RunConfig, SchemaFourRecordsTakeTheShardsRoute) {
  EXPECT_EQ(loaded_without("route", 4).route, RoutePolicy::kShards);
  // A file that names it keeps it.
  json old = emulated().key();
  old["route"] = "direct";
  auto c = run_config_from_json(old, 4, nullptr);
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(c.value().route, RoutePolicy::kDirect);
  EXPECT_EQ(RunConfig{}.route, RoutePolicy::kAuto);
}

// Schema 7 files predate --tcp-cc: their emulated ranks ran the host's
// default, which the file does not name.
TEST(RunConfig, SchemaSevenRecordsNameNoCongestionControl) {
  EXPECT_EQ(loaded_without("tcp_cc", 7).tcp_cc, "");
  RunConfig c = emulated();
  EXPECT_NE(c.label().find("emulate 50mbit 5us tcp reno"), std::string::npos) << c.label();
  c.tcp_cc.clear();
  EXPECT_EQ(c.label().find("tcp"), std::string::npos) << c.label();
  const auto args = c.allreduce_args();
  EXPECT_EQ(std::find(args.begin(), args.end(), "--tcp-cc"), args.end());
}

// Schema 8 files predate --tcp-idle-restart: their emulated ranks restarted
// from slow start after idle (the kernel's default), which the file does not
// say, so they pair with no newer emulated record.
TEST(RunConfig, SchemaEightRecordsNameNoIdleRestart) {
  EXPECT_EQ(loaded_without("tcp_idle_restart", 8).tcp_idle_restart, "");
  RunConfig c = emulated();
  EXPECT_NE(c.label().find("tcp reno idle-restart off"), std::string::npos) << c.label();
  const auto args = c.allreduce_args();
  const auto flag = std::find(args.begin(), args.end(), "--tcp-idle-restart");
  ASSERT_NE(flag, args.end());
  ASSERT_NE(flag + 1, args.end());
  EXPECT_EQ(*(flag + 1), "off");
  c.tcp_idle_restart.clear();
  EXPECT_NE(c.key(), emulated().key());
  EXPECT_EQ(c.label().find("idle-restart"), std::string::npos) << c.label();
}

// Schema 5 files predate --gpu-sync: every run left CUDA's default, spin.
TEST(RunConfig, SchemaFiveRecordsSpin) { EXPECT_EQ(loaded_without("gpu_sync", 5).gpu_sync, GpuSync::kSpin); }

// Schema 3 files predate the shard layout and the batch encoding: their runs
// split shards contiguously and sent whole blocks, and read back as such.
TEST(RunConfig, SchemaThreeRecordsTakeTheLayoutAndEncodingOfTheirTime) {
  json old = emulated().key();
  old.erase("shard_layout");
  old.erase("encoding");
  std::vector<std::string> defaulted;
  auto c = run_config_from_json(old, 3, &defaulted);
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c.value().shard_layout, ShardLayout::kContiguous);
  EXPECT_EQ(c.value().encoding, EncodingPolicy::kBlocks);
  EXPECT_EQ(defaulted, (std::vector<std::string>{"shard_layout", "encoding"}));
  // A schema 3 file that names its layout keeps it.
  old["shard_layout"] = "striped";
  c = run_config_from_json(old, 3, nullptr);
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ(c.value().shard_layout, ShardLayout::kStriped);
  EXPECT_FALSE(run_config_from_json(old, 4, nullptr).is_ok());
}

TEST(RunConfig, WrongTypesNameTheField) {
  json j = emulated().key();
  j["nodes"] = "three";
  auto c = run_config_from_json(j, 2, nullptr);
  ASSERT_FALSE(c.is_ok());
  EXPECT_EQ(c.status().code(), Code::kUsage);
  EXPECT_NE(c.status().message().find("'nodes'"), std::string::npos) << c.status().message();
  j = emulated().key();
  j["seed"] = -1;
  EXPECT_NE(run_config_from_json(j, 2, nullptr).status().message().find("'seed'"), std::string::npos);
}

TEST(RunConfig, LabelsShowWhatIsNotDefault) {
  RunConfig plain;
  plain.size_bytes = 4 << 20;
  EXPECT_EQ(plain.label(), "4M float density 0.1 block 256 nodes 4 overlap random blocks cpu");
  RunConfig fast = emulated(), slow = emulated();
  slow.link_rate_bps = 100'000'000;
  EXPECT_NE(fast.label(), slow.label());
  EXPECT_NE(fast.label().find("emulate 50mbit 5us"), std::string::npos) << fast.label();
}

// Plans `c.allreduce_args()` the way `omni-bench allreduce` would.
Result<RunPlan> plan_again(const RunConfig& c) {
  const auto args = c.allreduce_args();
  CLI::App app;
  AllreduceOptions o;
  bind_allreduce_options(app, o);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  app.parse(reversed);
  return plan_allreduce(o, 1, std::nullopt);
}

// The arguments a configuration names measure exactly that configuration:
// planned again, they give the same key.
TEST(RunConfig, AllreduceArgumentsReproduceTheConfiguration) {
  RunConfig c = emulated();
  c.aggregators = 0;  // an emulated run plans without a memory or launcher check
  auto plan = plan_again(c);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_EQ(plan.value().sizes.size(), 1u);
  EXPECT_EQ(plan.value().config(0).key_text(), c.key_text());
}

// --gpu-sync is part of the identity on device tensors: in the key, the
// label, and the arguments that measure the configuration again.
TEST(RunConfig, GpuSyncOnDeviceTensorsComesBackFromItsArguments) {
  RunConfig c;
  c.size_bytes = 4096;
  c.device = DeviceKind::kCuda;
  c.gpu_sync = GpuSync::kBlocking;
  EXPECT_EQ(c.key()["gpu_sync"], "blocking");
  EXPECT_NE(c.label().find("cuda gpu-sync blocking"), std::string::npos) << c.label();
  auto plan = plan_again(c);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan.value().config(0).key_text(), c.key_text());
  EXPECT_EQ(plan.value().describe()["gpu_sync"], "blocking");
  // On host tensors the option is refused, so the arguments leave it out.
  const auto cpu_args = RunConfig{}.allreduce_args();
  EXPECT_EQ(std::find(cpu_args.begin(), cpu_args.end(), "--gpu-sync"), cpu_args.end());
}

// The transport and its libfabric provider are part of the identity, and
// come back from the arguments (docs/transports.md).
TEST(RunConfig, TheFabricTransportAndItsProviderTellConfigurationsApart) {
  if (!fabric_provider_for("tcp").is_ok()) GTEST_SKIP() << fabric_provider_for("tcp").status().message();
  RunConfig tcp, fabric;
  tcp.size_bytes = fabric.size_bytes = 4096;
  fabric.transport = "fabric/tcp;ofi_rxm";
  EXPECT_NE(tcp.key_text(), fabric.key_text());
  EXPECT_NE(fabric.label().find("transport fabric/tcp;ofi_rxm"), std::string::npos) << fabric.label();
  const auto args = fabric.allreduce_args();
  const std::vector<std::string> provider{"--fabric-provider", "tcp;ofi_rxm"};
  EXPECT_NE(std::search(args.begin(), args.end(), provider.begin(), provider.end()), args.end());
  auto plan = plan_again(fabric);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan.value().config(0).key_text(), fabric.key_text());
  EXPECT_EQ(plan.value().transport.kind, TransportChoice::Kind::kFabric);
  // The short name is planned as the provider libfabric opens.
  RunConfig short_name = fabric;
  short_name.transport = "fabric/tcp";
  auto planned = plan_again(short_name);
  ASSERT_TRUE(planned.is_ok()) << planned.status().message();
  EXPECT_EQ(planned.value().config(0).transport, "fabric/tcp;ofi_rxm");
}

// docs/json-schema.md lists the identity fields in a table; it must name the
// same fields, in the same order, as the code.
TEST(RunConfig, SchemaDocListsTheIdentityFields) {
  std::ifstream doc(std::string(OMNIB_SOURCE_DIR) + "/docs/json-schema.md");
  ASSERT_TRUE(doc) << "docs/json-schema.md not found";
  std::string line;
  bool in_section = false;
  std::vector<std::string> listed;
  while (std::getline(doc, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Identity fields";
    if (!in_section || line.rfind("| `", 0) != 0) continue;
    const size_t end = line.find('`', 3);
    listed.push_back(line.substr(3, end - 3));
  }
  EXPECT_EQ(listed, identity_fields());
}

}  // namespace
}  // namespace omnib
