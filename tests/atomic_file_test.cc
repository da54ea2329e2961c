// Result files are replaced atomically, and never through anything planted
// beside them: the temporary file is new (O_EXCL|O_NOFOLLOW) under a name
// nobody can guess.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/cli_runner.h"
#include "tools/report/atomic_file.h"

namespace omnib {
namespace {

using testing::slurp;

std::string folder(const std::string& name) {
  const std::string dir = testing::temp_path(name);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(AtomicFile, PlantedSymlinkIsNotFollowed) {
  const std::string dir = folder("atomic_symlink");
  const std::string victim = dir + "/victim.txt";
  std::ofstream(victim) << "precious";
  const std::string out = dir + "/out.json";
  // Where the temporary file used to be: out.json.tmp.<pid>, predictable.
  const std::string planted = out + ".tmp." + std::to_string(getpid());
  ASSERT_EQ(symlink(victim.c_str(), planted.c_str()), 0);

  ASSERT_TRUE(write_file_atomically(out, "{\"new\": 1}\n").is_ok());
  EXPECT_EQ(slurp(victim), "precious");
  struct stat st {};
  ASSERT_EQ(lstat(out.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the output must be a file of its own, not a link to the victim";
  EXPECT_EQ(slurp(out), "{\"new\": 1}\n");
  ASSERT_EQ(lstat(planted.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the planted link is left as it was";
}

TEST(AtomicFile, ReplacesAndLeavesNoTemporaryFiles) {
  const std::string dir = folder("atomic_replace");
  const std::string out = dir + "/r.json";
  for (const char* text : {"first\n", "second\n"}) ASSERT_TRUE(write_file_atomically(out, text).is_ok());
  EXPECT_EQ(slurp(out), "second\n");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++entries;
    EXPECT_EQ(e.path().filename(), "r.json");
  }
  EXPECT_EQ(entries, 1);
}

TEST(AtomicFile, MissingFolderIsAUsageError) {
  const std::string out = folder("atomic_missing") + "/no/such/folder/r.json";
  Status s = write_file_atomically(out, "x");
  EXPECT_EQ(s.code(), Code::kUsage);
  EXPECT_NE(s.message().find("no/such/folder/r.json.tmp."), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("writable"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace omnib
