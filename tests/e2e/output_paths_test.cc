// What -J, --trace and compare --json do with a path that is not a regular
// file, end to end: a character device (made with mknod in a scratch folder,
// never the machine's /dev/null) is written in place and stays a device,
// with or without --force; a folder is a usage error that says what to do;
// a full disk is a usage error, not an internal one (docs/exit-codes.md).
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"
#include "tests/support/special_files.h"

namespace omnib {
namespace {

using testing::run_cli;
using testing::temp_path;

std::vector<std::string> small_run(std::vector<std::string> extra) {
  std::vector<std::string> args{"allreduce", "--nodes", "2", "--algo", "omni", "-b", "4K", "-e", "4K",
                                "-n", "2",         "-w",      "0", "-T",     "20"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string scratch_folder(const std::string& name) {
  const std::string dir = temp_path(name);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(OutputPaths, ACharacterDeviceStaysADevice) {
  const std::string null = scratch_folder("device") + "/null";
  if (!testing::make_char_device(null, 1, 3)) GTEST_SKIP() << "mknod needs root";
  const std::string result = testing::small_result_file();
  const std::vector<std::vector<std::string>> commands = {
      small_run({"-J", null, "--force"}),
      small_run({"--trace", null, "--force"}),
      small_run({"-J", null}),  // nothing is replaced, so --force is not needed
      {"compare", result, result, "--json", null, "--force"},
      {"sweep", "--nodes", "1", "--sizes", "4K", "-n", "1", "-w", "0", "-J", null, "--force"},
  };
  for (const auto& args : commands) {
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << " " << args[args.size() - 2] << ": " << r.err;
    ASSERT_TRUE(testing::is_char_device(null)) << "replaced by: " << args[0] << " ... " << args[args.size() - 2];
  }
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(null).parent_path()))
    EXPECT_EQ(e.path().filename(), "null") << "left beside the device";
}

TEST(OutputPaths, AFolderIsAUsageErrorThatSaysWhatToDo) {
  const std::string folder = scratch_folder("results");
  const std::string result = testing::small_result_file();
  for (const auto& args : {small_run({"-J", folder}), small_run({"-J", folder, "--force"}),
                           small_run({"--trace", folder, "--force"}),
                           std::vector<std::string>{"compare", result, result, "--json", folder, "--force"},
                           std::vector<std::string>{"sweep", "--nodes", "1", "--sizes", "4K", "-J", folder}}) {
    auto r = run_cli(args, {}, 60);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("is a folder: name a file in it"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::is_directory(folder));
  }
}

TEST(OutputPaths, AFullDiskIsTheUsersToFix) {
  testing::FullDisk disk(temp_path("disk"));
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  const std::string result = testing::small_result_file();
  for (const auto& args :
       {small_run({"-J", disk.folder() + "/r.json"}), small_run({"--trace", disk.folder() + "/t.json"}),
        std::vector<std::string>{"compare", result, result, "--json", disk.folder() + "/c.json"}}) {
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("No space left on device: free some space there"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace omnib
