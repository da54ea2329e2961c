// libfabric is opened on first use, not at program start
// (engine/transport/fabric/fabric_library.cc): a program that never opens a fabric
// does not pay its libraries' start-up (about 0.2 s of sleeps per process on
// Debian), and one that does still gets it. The dynamic loader's own account
// (LD_DEBUG=files) says which libraries a process loaded, and how. Without
// libfabric on the host, everything but --transport fabric still runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include "engine/build_features.h"
#include "tests/support/cli_runner.h"

namespace omnib {
namespace {

using testing::run_cli;

TEST(FabricLibrary, AProgramThatOpensNoFabricNeverLoadsIt) {
  const auto r = run_cli({"list"}, {"LD_DEBUG=files"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("file=libc.so"), std::string::npos) << "the loader said nothing: is LD_DEBUG honoured?";
  EXPECT_EQ(r.err.find("libfabric.so"), std::string::npos) << "omni-bench list loaded libfabric:\n" << r.err;
}

TEST(FabricLibrary, ARunOverAFabricLoadsItOnFirstUse) {
  if (!OMNIB_WITH_LIBFABRIC) GTEST_SKIP() << "built without libfabric";
  const auto r = run_cli({"allreduce", "--algo", "omni", "--nodes", "2", "-b", "64K", "-e", "64K", "-n", "1", "-w",
                          "0", "-T", "20", "--transport", "fabric", "--fabric-provider", "tcp"},
                         {"LD_DEBUG=files"});
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(r.err.size() > 4000 ? r.err.size() - 4000 : 0);
  EXPECT_NE(r.err.find("file=libfabric.so.1 [0];  dynamically loaded by"), std::string::npos)
      << "libfabric was not opened on use";
  EXPECT_EQ(r.err.find("file=libfabric.so.1 [0];  needed by"), std::string::npos) << "libfabric is linked again";
}

// Runs omni-bench with `args` in a mount namespace of its own where
// libfabric.so.1 is /dev/null: a host without libfabric, as far as the
// loader can tell.
testing::CliResult run_without_libfabric(std::vector<std::string> args) {
  const std::string script =
      "lib=$(ldconfig -p | sed -n 's/^[[:space:]]*libfabric[.]so[.]1 (.*) => //p' | head -n 1); "
      "[ -n \"$lib\" ] || { echo 'no libfabric.so.1 in the loader cache' >&2; exit 90; }; "
      "exec unshare --mount sh -c 'mount --bind /dev/null \"$(readlink -f \"$0\")\" && exec \"$@\"' \"$lib\" \"$@\"";
  args.insert(args.begin(), {"-c", script, "sh", testing::omni_bench_binary()});
  return testing::run_binary("/bin/sh", args);
}

TEST(FabricLibrary, AHostWithoutItRunsOverTcpAndRefusesAFabricSayingWhy) {
  if (!OMNIB_WITH_LIBFABRIC) GTEST_SKIP() << "built without libfabric";
  if (geteuid() != 0) GTEST_SKIP() << "hiding libfabric takes a mount namespace: run as root";
  const std::vector<std::string> run = {"allreduce", "--algo", "omni", "--nodes", "2", "-b", "64K", "-e", "64K",
                                        "-n", "1", "-w", "0", "-T", "20"};
  auto fabric = run;
  fabric.insert(fabric.end(), {"--transport", "fabric"});
  const auto refused = run_without_libfabric(fabric);
  EXPECT_EQ(refused.exit_code, 6) << refused.err;
  EXPECT_NE(refused.err.find("could not load libfabric.so.1"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--transport tcp"), std::string::npos) << refused.err;

  const std::string json = testing::temp_path("no-libfabric.json");
  auto tcp = run;
  tcp.insert(tcp.end(), {"-J", json});
  const auto ran = run_without_libfabric(tcp);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  const auto fabric_block = testing::read_json(json)["environment"]["libfabric"];
  EXPECT_TRUE(fabric_block["version"].is_null()) << fabric_block.dump();
  EXPECT_TRUE(fabric_block["usable_providers"].empty()) << fabric_block.dump();
}

}  // namespace
}  // namespace omnib
