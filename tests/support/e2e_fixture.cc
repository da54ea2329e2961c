#include "tests/support/e2e_fixture.h"

#include <cstdint>
#include <utility>

#include "tests/support/cli_runner.h"

namespace omnib::testing {

nlohmann::json run_allreduce_ok(const std::vector<std::string>& args, int limit_seconds,
                                const std::vector<std::string>& env) {
  const std::string json = temp_path("out.json");
  // Few iterations and a short network timeout: correctness, not speed.
  std::vector<std::string> full{"allreduce", "-n", "2", "-w", "1", "-T", "20", "-J", json};
  full.insert(full.end(), args.begin(), args.end());
  auto r = run_cli(full, env, limit_seconds);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  if (r.exit_code != 0) return {};
  return read_json(json);
}

void expect_all_rows_correct(const nlohmann::json& doc, size_t expected_rows) {
  ASSERT_TRUE(doc.contains("results"));
  ASSERT_EQ(doc["results"].size(), expected_rows);
  for (const auto& r : doc["results"]) {
    EXPECT_FALSE(r.value("skipped", false)) << r.dump();
    EXPECT_TRUE(r["checked"].get<bool>()) << r["algo"];
    EXPECT_TRUE(r["correct"].get<bool>()) << r.dump();
    EXPECT_EQ(r["wrong_elements"].get<uint64_t>(), 0u) << r["algo"];
  }
}

void expect_models_exact(const nlohmann::json& doc) {
  ASSERT_TRUE(doc.contains("results"));
  for (const auto& r : doc["results"]) {
    SCOPED_TRACE(r["algo"].get<std::string>() + " at " + std::to_string(r["config"]["size_bytes"].get<uint64_t>()) +
                 " bytes");
    ASSERT_TRUE(r["wire_bytes"].is_object()) << r.dump();
    EXPECT_TRUE(r["analytic_bytes"]["exact"].get<bool>());
    for (const char* field : {"sent_per_rank_max", "sent_total"})
      EXPECT_EQ(r["wire_bytes"][field].get<double>(), r["analytic_bytes"][field].get<double>()) << field;
  }
}

std::string AlgoFamily::list() const {
  std::string out;
  for (const auto& a : algos_) out += (out.empty() ? "" : ",") + a;
  return out;
}

nlohmann::json AlgoFamily::run_ok(std::vector<std::string> args) const {
  args.insert(args.begin(), {"--algo", list()});
  return run_allreduce_ok(args, limit_);
}

void AlgoFamily::expect_all_correct(const nlohmann::json& doc, size_t sizes) const {
  expect_all_rows_correct(doc, algos_.size() * sizes);
}

void AlgoFamily::expect_correct(std::vector<std::string> args, size_t sizes) const {
  expect_all_correct(run_ok(std::move(args)), sizes);
}

std::vector<Grid> nodes_and_densities() {
  std::vector<Grid> grid;
  for (int nodes : {3, 4, 5})
    for (const char* density : {"0", "0.01", "0.5", "1"}) grid.push_back({nodes, density});
  return grid;
}

std::vector<std::string> uneven_count_args(const Grid& g) {
  return {"--nodes", std::to_string(g.nodes), "-b", "400012", "-e", "400012", "--density", g.density};
}

std::string grid_name(const ::testing::TestParamInfo<Grid>& info) {
  std::string d = info.param.density;
  for (auto& ch : d)
    if (ch == '.') ch = '_';
  return "nodes" + std::to_string(info.param.nodes) + "_density" + d;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

void expect_models_exact(const AlgoFamily& family, const Case& c) {
  auto doc = family.run_ok(c.args);
  ASSERT_FALSE(doc.is_null());
  family.expect_all_correct(doc, c.sizes);
  expect_models_exact(doc);
}

}  // namespace omnib::testing
