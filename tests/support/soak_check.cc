#include "tests/support/soak_check.h"

#include <gtest/gtest.h>

namespace omnib::testing {

SoakResult run_soak(const std::string& binary, const std::vector<std::string>& args,
                    const std::vector<std::string>& env, int limit_seconds) {
  SoakResult out;
  const std::string json = temp_path("soak.json");
  std::vector<std::string> full{"allreduce"};
  full.insert(full.end(), args.begin(), args.end());
  full.insert(full.end(), {"-J", json});
  out.cli = run_binary(binary, full, env, limit_seconds);
  EXPECT_EQ(out.cli.exit_code, 0) << out.cli.err;
  if (slurp(json).empty()) {
    ADD_FAILURE() << "no results file: " << out.cli.err;
    return out;
  }
  out.doc = read_json(json);
  if (!out.doc.contains("resources")) {
    ADD_FAILURE() << "no resources block in " << json;
    return out;
  }
  auto resources = resources_from_json(out.doc["resources"]);
  if (!resources.is_ok()) {
    ADD_FAILURE() << resources.status().message();
    return out;
  }
  out.resources = resources.take();
  out.grew = out.resources->verdict.grew;
  return out;
}

}  // namespace omnib::testing
