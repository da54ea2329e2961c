// End-to-end: every algorithm in float, bf16 and half, all in one --algo
// list (the harness poisons and checks every call of each), at 2, 3, 4 and
// 5 ranks and densities 0, 0.01, 0.5 and 1, on a tensor of 100003 elements
// (a prime). Each must match the reference bit for bit, or be skipped for a
// reason this build or machine gives: Gloo has no bfloat16, and NCCL needs
// a GPU. Beyond the ranks whose 16-bit sums stay exact the run is refused.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/build_features.h"
#include "tests/support/cli_runner.h"
#include "tests/support/e2e_fixture.h"

namespace omnib {
namespace {

using nlohmann::json;

const std::vector<std::string> kAlgos = {"omni",      "ps",
                                         "ring",      "tree",
                                         "allgather", "sparcml-split",
                                         "sparcml-recdbl", "oktopk",
                                         "gloo-ring", "gloo-ring-chunked",
                                         "gloo-halving-doubling", "gloo-bcube",
                                         "nccl",      "nccl-tree"};

bool is_gloo(const std::string& algo) { return algo.rfind("gloo-", 0) == 0; }
bool is_nccl(const std::string& algo) { return algo.rfind("nccl", 0) == 0; }

// Why `algo` may be skipped in `dtype` on this build ("" if it must run);
// nccl's reason (no GPU here) depends on the machine, so any reason passes.
std::string expected_skip(const std::string& algo, const std::string& dtype) {
  if (is_gloo(algo) && !OMNIB_WITH_GLOO) return "no Gloo";
  if (is_gloo(algo) && dtype == "bf16") return "bfloat16";
  if (is_nccl(algo)) return OMNIB_WITH_NCCL ? "*" : "no NCCL";
  return "";
}

struct DtypeGrid {
  std::string dtype;
  int nodes;
  std::string density;
};

void PrintTo(const DtypeGrid& g, std::ostream* os) {
  *os << g.dtype << " on " << g.nodes << " ranks at density " << g.density;
}

std::string name_of(const ::testing::TestParamInfo<DtypeGrid>& info) {
  std::string d = info.param.density;
  for (auto& ch : d)
    if (ch == '.') ch = '_';
  return info.param.dtype + "_nodes" + std::to_string(info.param.nodes) + "_density" + d;
}

std::vector<DtypeGrid> grid() {
  std::vector<DtypeGrid> g;
  for (const char* dtype : {"float", "bf16", "half"})
    for (int nodes : {2, 3, 4, 5})
      for (const char* density : {"0", "0.01", "0.5", "1"}) g.push_back({dtype, nodes, density});
  return g;
}

class EveryAlgorithmInEveryType : public ::testing::TestWithParam<DtypeGrid> {};

TEST_P(EveryAlgorithmInEveryType, ExactOrSkippedWithItsReason) {
  const DtypeGrid& p = GetParam();
  const std::string bytes = std::to_string(100003 * (p.dtype == "float" ? 4 : 2));
  std::string list;
  for (const auto& a : kAlgos) list += (list.empty() ? "" : ",") + a;
  const json doc = testing::run_allreduce_ok({"--algo", list, "-d", p.dtype, "--nodes", std::to_string(p.nodes), "-b",
                                              bytes, "-e", bytes, "--density", p.density},
                                             180);
  ASSERT_TRUE(doc.contains("results"));
  ASSERT_EQ(doc["results"].size(), kAlgos.size());
  for (const auto& r : doc["results"]) {
    const std::string algo = r["algo"];
    EXPECT_EQ(r["config"]["dtype"], p.dtype) << algo;
    const std::string skip = expected_skip(algo, p.dtype);
    if (r["skipped"].get<bool>()) {
      const std::string reason = r["skip_reason"];
      EXPECT_FALSE(skip.empty()) << algo << " was skipped: " << reason;
      EXPECT_FALSE(reason.empty()) << algo;
      if (skip != "*") {
        EXPECT_NE(reason.find(skip), std::string::npos) << algo << ": " << reason;
      }
      continue;
    }
    EXPECT_TRUE(skip.empty() || skip == "*") << algo << " ran although " << skip;
    EXPECT_TRUE(r["checked"].get<bool>()) << algo;
    EXPECT_TRUE(r["correct"].get<bool>()) << algo << " " << r.dump();
    EXPECT_EQ(r["wrong_elements"].get<uint64_t>(), 0u) << algo;
  }
}

INSTANTIATE_TEST_SUITE_P(DtypesNodesAndDensities, EveryAlgorithmInEveryType, ::testing::ValuesIn(grid()), name_of);

// The 16-bit payloads halve what the dense algorithms put on the wire, and
// every cost model (e = 2) says what the algorithms send.
TEST(SixteenBitWireBytes, DenseBytesHalveAndMatchTheModels) {
  std::map<std::string, std::map<std::string, double>> sent;  // dtype -> algo -> bytes
  for (const char* dtype : {"float", "bf16"}) {
    const std::string bytes = dtype == std::string("float") ? "4M" : "2M";
    const json doc = testing::run_allreduce_ok({"--algo", "ps,ring,tree,omni,allgather,sparcml-split,sparcml-recdbl,oktopk",
                                                "-d", dtype, "--nodes", "4", "-b", bytes, "-e", bytes, "--density", "0.1"});
    testing::expect_all_rows_correct(doc, 8);
    for (const auto& r : doc["results"]) {
      const double measured = r["wire_bytes"]["sent_per_rank_max"].get<double>();
      const double model = r["analytic_bytes"]["sent_per_rank_max"].get<double>();
      EXPECT_NEAR(measured / model, 1.0, 0.15) << r["algo"] << " " << dtype;
      sent[dtype][r["algo"]] = measured;
    }
  }
  for (const char* algo : {"ps", "ring", "tree"})
    EXPECT_NEAR(sent["bf16"][algo] / sent["float"][algo], 0.5, 0.02) << algo;
  // omni's blocks halve; their 8-byte indices do not.
  EXPECT_LT(sent["bf16"]["omni"] / sent["float"]["omni"], 0.52);
}

// Within the limit the run goes ahead and is exact; one rank more is refused.
TEST(SixteenBitRankLimit, RefusedBeyondTheExactSums) {
  const json doc = testing::run_allreduce_ok(
      {"--algo", "omni,ring", "-d", "bf16", "--nodes", "32", "-b", "64", "-e", "64", "--density", "1"}, 120);
  testing::expect_all_rows_correct(doc, 2);
  for (auto [dtype, nodes, limit] : {std::tuple{"bf16", "33", "32"}, std::tuple{"half", "257", "256"}}) {
    auto r = testing::run_cli({"allreduce", "-d", dtype, "--nodes", nodes, "-b", "64", "-e", "64"}, {}, 30);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(std::string("at most ") + limit + " ranks"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace omnib
