// --profile's net/B column end to end: the transport's part of the CPU per
// wire byte, over kernel TCP and over libfabric's tcp provider, for our own
// algorithms: present, above zero and below the whole CPU per wire byte;
// absent from a run without --profile.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/build_features.h"
#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

using nlohmann::json;
using testing::read_json;
using testing::temp_path;

// `omni-bench allreduce` of ring and omni on 3 ranks, 1 MiB, with `extra`.
json run_ring_and_omni(std::vector<std::string> extra) {
  const std::string out = temp_path("transport-cpu.json");
  std::vector<std::string> args{"allreduce", "--nodes", "3",      "-b", "1M", "-e", "1M", "--density", "0.1",
                                "--algo",    "ring,omni", "-n", "3",  "-w", "1", "-J", out};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto run = testing::run_cli(args, {"OMNIB_FLOOR_CACHE=" + temp_path("cache")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  if (run.exit_code != 0) return json();
  if (std::find(extra.begin(), extra.end(), "--profile") != extra.end())
    EXPECT_NE(run.out.find("net/B(ns)"), std::string::npos) << run.out;
  return read_json(out);
}

void expect_transport_part(const json& doc, const std::string& transport) {
  ASSERT_TRUE(doc.contains("results")) << transport;
  for (const auto& rec : doc["results"]) {
    const json& cpu = rec["cpu"];
    ASSERT_TRUE(cpu["transport_ns_per_wire_byte"].is_number()) << transport << " " << rec["algo"];
    const double net = cpu["transport_ns_per_wire_byte"].get<double>();
    EXPECT_GT(net, 0) << transport << " " << rec["algo"];
    EXPECT_LT(net, cpu["ns_per_wire_byte"].get<double>()) << transport << " " << rec["algo"];
    EXPECT_GT(cpu["transport_us_per_call"].get<double>(), 0) << transport << " " << rec["algo"];
  }
}

TEST(TransportCpuEndToEnd, ProfileGivesTheTransportsPartOverTcp) {
  expect_transport_part(run_ring_and_omni({"--profile"}), "tcp");
  const json plain = run_ring_and_omni({});
  for (const auto& rec : plain["results"]) EXPECT_TRUE(rec["cpu"]["transport_ns_per_wire_byte"].is_null());
}

TEST(TransportCpuEndToEnd, ProfileGivesTheTransportsPartOverFabric) {
  if (!OMNIB_WITH_LIBFABRIC) GTEST_SKIP() << "this build has no libfabric";
  expect_transport_part(run_ring_and_omni({"--profile", "--transport", "fabric", "--fabric-provider", "tcp"}),
                        "fabric");
}

}  // namespace
}  // namespace omnib
