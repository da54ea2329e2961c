#include "tools/report/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace omnib {
namespace {

constexpr int kNameAttempts = 100;

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// 16 hex digits nobody can guess: the temporary name is not predictable, so
// it cannot be planted in advance.
std::string random_suffix() {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
    // No entropy source: fall back to something unique to this call; O_EXCL
    // still refuses anything already there.
    static uint64_t counter = 0;
    r = (static_cast<uint64_t>(getpid()) << 32) ^ static_cast<uint64_t>(time(nullptr)) ^ ++counter;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r));
  return hex;
}

// Creates a new, empty file beside `path` under a fresh name; never opens
// anything that is already there (a planted file or symlink), retrying
// another name instead.
Result<int> create_temp_beside(const std::string& path, std::string& tmp) {
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    tmp = path + ".tmp." + random_suffix();
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST)
      return usage_error("cannot write '" + tmp + "': " + std::strerror(errno) + " (is the folder writable?)");
  }
  return internal_error("cannot find a free temporary name beside '" + path + "' after " +
                        std::to_string(kNameAttempts) + " tries");
}

Status write_all(int fd, const std::string& contents) {
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t w = write(fd, contents.data() + done, contents.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return internal_error(std::strerror(errno));
    done += static_cast<size_t>(w);
  }
  return Status::ok();
}

// Makes the rename itself durable: a crash after we return still finds the
// new file under its name.
Status sync_folder(const std::string& folder) {
  const int fd = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return internal_error("opening folder '" + folder + "': " + std::strerror(errno));
  const bool synced = fsync(fd) == 0;
  const int err = errno;
  close(fd);
  // Some file systems cannot sync a folder; the data itself is already safe.
  if (!synced && err != EINVAL && err != EROFS)
    return internal_error("syncing folder '" + folder + "': " + std::strerror(err));
  return Status::ok();
}

}  // namespace

Status write_file_atomically(const std::string& path, const std::string& contents) {
  std::string tmp;
  auto created = create_temp_beside(path, tmp);
  if (!created.is_ok()) return created.status();
  const int fd = created.value();
  Status written = write_all(fd, contents);
  if (written.is_ok() && fsync(fd) != 0) written = internal_error(std::strerror(errno));
  if (close(fd) != 0 && written.is_ok()) written = internal_error(std::strerror(errno));
  if (!written.is_ok()) {
    unlink(tmp.c_str());
    return internal_error("writing '" + tmp + "': " + written.message());
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return internal_error("renaming '" + tmp + "' to '" + path + "': " + std::strerror(err));
  }
  return sync_folder(folder_of(path));
}

Status refuse_to_overwrite(const std::string& path, bool force, const std::string& flag_hint) {
  struct stat st {};
  if (force || stat(path.c_str(), &st) != 0) return Status::ok();
  return usage_error("'" + path + "' already exists and will not be overwritten: choose another file name, or pass " +
                     flag_hint);
}

}  // namespace omnib
