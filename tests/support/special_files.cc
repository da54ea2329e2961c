#include "tests/support/special_files.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace omnib::testing {

bool make_char_device(const std::string& path, unsigned major, unsigned minor) {
  return mknod(path.c_str(), S_IFCHR | 0666, makedev(major, minor)) == 0;
}

bool is_char_device(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

FullDisk::FullDisk(const std::string& folder) : folder_(folder) {
  mkdir(folder_.c_str(), 0755);
  if (mount("tmpfs", folder_.c_str(), "tmpfs", 0, "size=64k") != 0) return;
  mounted_ = true;
  // Fill it: every later write in it fails with ENOSPC.
  const std::string fill = folder_ + "/fill";
  const int fd = open(fill.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const std::vector<char> block(4096, 'x');
  while (fd >= 0 && write(fd, block.data(), block.size()) > 0) {
  }
  if (fd >= 0) close(fd);
}

FullDisk::~FullDisk() {
  if (mounted_) umount2(folder_.c_str(), MNT_DETACH);
  rmdir(folder_.c_str());
}

}  // namespace omnib::testing
