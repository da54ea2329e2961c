// libfabric is opened on first use, not at program start
// (engine/transport/fabric_library.cc): a program that never opens a fabric
// does not pay its libraries' start-up (about 0.2 s of sleeps per process on
// Debian), and one that does still gets it. The dynamic loader's own account
// (LD_DEBUG=files) says which libraries a process loaded, and how.
#include <gtest/gtest.h>

#include "engine/build_features.h"
#include "tests/cli_runner.h"

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

}  // namespace
}  // namespace omnib
