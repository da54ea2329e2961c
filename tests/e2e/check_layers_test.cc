// ci/check_layers.py, the check that holds includes to the house's layers:
// the tree as it is passes, and a copy of it with one upward include or one
// pair of folders that include each other fails, naming the file.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

namespace fs = std::filesystem;
using testing::CliResult;
using testing::run_binary;
using testing::temp_path;

const fs::path kSource = OMNIB_SOURCE_DIR;

CliResult check_layers(const fs::path& root) {
  return run_binary("/usr/bin/python3", {(kSource / "ci" / "check_layers.py").string(), root.string()});
}

// The sources and CMake files of the layered folders, copied to a scratch tree.
fs::path copy_of_tree() {
  const fs::path root = temp_path("tree");
  fs::create_directories(root);
  for (const char* top : {"engine", "baselines", "cuda", "tools", "cmake"})
    fs::copy(kSource / top, root / top, fs::copy_options::recursive);
  fs::copy_file(kSource / "CMakeLists.txt", root / "CMakeLists.txt");
  return root;
}

void append_include(const fs::path& file, const std::string& header) {
  std::ofstream(file, std::ios::app) << "\n#include \"" << header << "\"\n";
}

TEST(CheckLayers, TheTreeHoldsItsLayers) {
  const CliResult r = check_layers(kSource);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("no upward include"), std::string::npos) << r.out;
}

TEST(CheckLayers, AnUpwardIncludeFails) {
  const fs::path root = copy_of_tree();
  ASSERT_EQ(check_layers(root).exit_code, 0);
  append_include(root / "engine" / "base" / "tensor.cc", "engine/omni/omni_collective.h");
  const CliResult r = check_layers(root);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("engine/base/tensor.cc"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("omnib_base includes engine/omni/omni_collective.h"), std::string::npos) << r.out;
}

TEST(CheckLayers, FoldersThatIncludeEachOtherFail) {
  const fs::path root = copy_of_tree();
  // measure includes record already; record including measure closes the loop.
  append_include(root / "tools" / "record" / "time_tally.cc", "tools/measure/cpu_time.h");
  const CliResult r = check_layers(root);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("tools/measure <-> tools/record"), std::string::npos) << r.out;
}

TEST(CheckLayers, AFolderInNoLayerFails) {
  const fs::path root = copy_of_tree();
  fs::create_directories(root / "tools" / "stray");
  std::ofstream(root / "tools" / "stray" / "stray.cc") << "int stray = 0;\n";
  const CliResult r = check_layers(root);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("tools/stray/: in no layer"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace omnib
