// Result files are replaced atomically, and never through anything planted
// beside them: the temporary file is new (O_EXCL|O_NOFOLLOW) under a name
// nobody can guess. What is not a file is never replaced: a device or FIFO
// is written in place, a folder or socket refused; a link is followed. A
// full disk is the user's to fix (a usage error), and a signal during a
// write leaves no temporary file.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"
#include "tests/support/special_files.h"
#include "tools/common/atomic_file.h"

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

// The file names in `dir` that look like our temporary files.
std::vector<std::string> temporary_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().filename());
  return out;
}

TEST(AtomicFile, CharacterDeviceIsWrittenInPlaceNeverReplaced) {
  const std::string null = folder("atomic_device") + "/null";
  if (!testing::make_char_device(null, 1, 3)) GTEST_SKIP() << "mknod needs root";
  EXPECT_EQ(output_kind(null).value(), OutputKind::kStream);
  EXPECT_TRUE(check_output_path(null, false, "--force").is_ok()) << "writing a device replaces nothing";
  Status s = write_file_atomically(null, "{\"new\": 1}\n");
  EXPECT_TRUE(s.is_ok()) << s.message();
  EXPECT_TRUE(testing::is_char_device(null)) << "the device became a file";
  EXPECT_TRUE(temporary_files(folder("atomic_device")).empty());
}

TEST(AtomicFile, FifoIsWrittenInPlaceForItsReader) {
  const std::string dir = folder("atomic_fifo");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  std::string got;
  std::thread reader([&] {
    const int fd = open(fifo.c_str(), O_RDONLY);
    char buf[256];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
    close(fd);
  });
  // The writer may come before the reader has opened its end: try a while.
  Status s = usage_error("not tried");
  for (int i = 0; i < 200 && !s.is_ok(); ++i) {
    s = write_file_atomically(fifo, "{\"new\": 1}\n");
    if (!s.is_ok()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  reader.join();
  EXPECT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(got, "{\"new\": 1}\n");
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO became a file";
}

TEST(AtomicFile, FifoWithoutAReaderIsRefusedAtOnce) {
  const std::string fifo = folder("atomic_fifo_alone") + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const auto start = std::chrono::steady_clock::now();
  Status s = write_file_atomically(fifo, "x");
  EXPECT_EQ(s.code(), Code::kUsage) << s.message();
  EXPECT_NE(s.message().find("nobody reads"), std::string::npos) << s.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(AtomicFile, FolderIsAUsageErrorAndStaysAFolder) {
  const std::string dir = folder("atomic_folder") + "/results";
  std::filesystem::create_directories(dir);
  for (Status s : {write_file_atomically(dir, "x"), check_output_path(dir, true, "--force")}) {
    EXPECT_EQ(s.code(), Code::kUsage) << s.message();
    EXPECT_NE(s.message().find("is a folder: name a file in it"), std::string::npos) << s.message();
  }
  EXPECT_TRUE(std::filesystem::is_directory(dir));
}

TEST(AtomicFile, SocketIsAUsageErrorAndStaysASocket) {
  const std::string path = folder("atomic_socket") + "/sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  Status s = write_file_atomically(path, "x");
  EXPECT_EQ(s.code(), Code::kUsage) << s.message();
  EXPECT_NE(s.message().find("is a socket"), std::string::npos) << s.message();
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  close(fd);
}

// A link is followed: the file it leads to is replaced and the link stays; a
// link to a device leads to a device, written in place.
TEST(AtomicFile, LinksAreFollowedAndKept) {
  const std::string dir = folder("atomic_links");
  const std::string target = dir + "/target.json", link = dir + "/link.json";
  std::ofstream(target) << "old\n";
  ASSERT_EQ(symlink("target.json", link.c_str()), 0);
  ASSERT_TRUE(write_file_atomically(link, "new\n").is_ok());
  EXPECT_EQ(slurp(target), "new\n");
  EXPECT_TRUE(std::filesystem::is_symlink(link)) << "the link was replaced by a file";
  EXPECT_TRUE(temporary_files(dir).empty());

  const std::string null = dir + "/null", to_null = dir + "/to_null";
  if (!testing::make_char_device(null, 1, 3)) GTEST_SKIP() << "mknod needs root";
  ASSERT_EQ(symlink(null.c_str(), to_null.c_str()), 0);
  ASSERT_TRUE(write_file_atomically(to_null, "x").is_ok());
  EXPECT_TRUE(testing::is_char_device(null));
  EXPECT_TRUE(std::filesystem::is_symlink(to_null));
}

TEST(AtomicFile, LinkToNothingIsAUsageError) {
  const std::string link = folder("atomic_dangling") + "/link.json";
  ASSERT_EQ(symlink("missing.json", link.c_str()), 0);
  Status s = write_file_atomically(link, "x");
  EXPECT_EQ(s.code(), Code::kUsage) << s.message();
  EXPECT_NE(s.message().find("symbolic link to nothing"), std::string::npos) << s.message();
  EXPECT_TRUE(std::filesystem::is_symlink(link));
}

TEST(AtomicFile, FullDiskIsAUsageErrorThatSaysSo) {
  testing::FullDisk disk(folder("atomic_full") + "/disk");
  if (!disk.mounted()) GTEST_SKIP() << "mounting a tmpfs needs root";
  Status s = write_file_atomically(disk.folder() + "/r.json", std::string(256 * 1024, 'x'));
  EXPECT_EQ(s.code(), Code::kUsage) << s.message();
  EXPECT_NE(s.message().find("free some space"), std::string::npos) << s.message();
  EXPECT_TRUE(temporary_files(disk.folder()).empty());
}

// SIGTERM while the temporary file is being written: the process still ends
// by SIGTERM, and the temporary file is gone.
TEST(AtomicFile, SigtermDuringAWriteLeavesNoTemporaryFile) {
  const std::string dir = folder("atomic_sigterm");
  const std::string out = dir + "/r.json";
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGTERM, SIG_DFL);
    // Long enough to be caught in the middle: rewritten until killed.
    const std::string big(16u << 20, 'x');
    for (;;) (void)write_file_atomically(out, big);
  }
  bool seen = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!seen && std::chrono::steady_clock::now() < deadline) seen = !temporary_files(dir).empty();
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(seen) << "no temporary file was ever seen";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "the signal must still end the process";
  EXPECT_EQ(temporary_files(dir), std::vector<std::string>{});
}

}  // namespace
}  // namespace omnib
