#include "tools/report/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace omnib {

Status write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return usage_error("cannot write '" + tmp + "': " + std::strerror(errno) + " (is the folder writable?)");
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t w = write(fd, contents.data() + done, contents.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return internal_error("writing '" + tmp + "': " + std::strerror(err));
    }
    done += static_cast<size_t>(w);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    unlink(tmp.c_str());
    return internal_error("flushing '" + tmp + "': " + std::strerror(errno));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return internal_error("renaming '" + tmp + "' to '" + path + "': " + std::strerror(err));
  }
  return Status::ok();
}

Status refuse_to_overwrite(const std::string& path, bool force, const std::string& flag_hint) {
  struct stat st {};
  if (force || stat(path.c_str(), &st) != 0) return Status::ok();
  return usage_error("'" + path + "' already exists and will not be overwritten: choose another file name, or pass " +
                     flag_hint);
}

}  // namespace omnib
