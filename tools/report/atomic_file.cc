#include "tools/report/atomic_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "tools/config/regular_file.h"
#include "tools/report/temp_file_guard.h"

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

// A failed write, sync or close of `path`: what the user can fix (a full
// disk, a read-only or forbidden place) is a usage error that says so; a
// stream whose reader left ends the command as a closed pipe does.
Status io_error(const std::string& doing, const std::string& path, int err) {
  const std::string what = doing + " '" + path + "': " + std::strerror(err);
  switch (err) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return usage_error(what + ": free some space there, or write the file elsewhere");
    case EROFS:
    case EACCES:
    case EPERM:
      return usage_error(what + ": write the file somewhere you may write");
    case EPIPE:
      return output_closed_error(what + ": its reader went away");
    default:
      return internal_error(what);
  }
}

// Creates a new, empty file beside `path` under a fresh name; never opens
// anything that is already there (a planted file or symlink), retrying
// another name instead. `guard` watches each name before it is created.
Result<int> create_temp_beside(const std::string& path, std::string& tmp, TempFileGuard& guard) {
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    tmp = path + ".tmp." + random_suffix();
    guard.watch(tmp);
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno == ENOENT || errno == ENOTDIR)
      return usage_error("cannot write '" + tmp + "': " + std::strerror(errno) +
                         " (does the folder exist, and is it writable?)");
    if (errno != EEXIST) return io_error("creating", tmp, errno);
  }
  return internal_error("cannot find a free temporary name beside '" + path + "' after " +
                        std::to_string(kNameAttempts) + " tries");
}

Status write_all(int fd, const std::string& contents, const std::string& path) {
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t w = write(fd, contents.data() + done, contents.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return io_error("writing", path, errno);
    done += static_cast<size_t>(w);
  }
  return Status::ok();
}

// Makes the rename itself durable: a crash after we return still finds the
// new file under its name.
Status sync_folder(const std::string& folder) {
  const int fd = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("opening folder", folder, errno);
  const bool synced = fsync(fd) == 0;
  const int err = errno;
  close(fd);
  // Some file systems cannot sync a folder; the data itself is already safe.
  if (!synced && err != EINVAL && err != EROFS) return io_error("syncing folder", folder, err);
  return Status::ok();
}

// Writes a new file beside `path` and renames it over `path`.
Status replace_file(const std::string& path, const std::string& contents) {
  std::string tmp;
  TempFileGuard guard;
  auto created = create_temp_beside(path, tmp, guard);
  if (!created.is_ok()) return created.status();
  const int fd = created.value();
  Status written = write_all(fd, contents, tmp);
  if (written.is_ok() && fsync(fd) != 0) written = io_error("syncing", tmp, errno);
  if (close(fd) != 0 && written.is_ok()) written = io_error("closing", tmp, errno);
  if (!written.is_ok()) {
    unlink(tmp.c_str());
    return written;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return io_error("renaming '" + tmp + "' to", path, err);
  }
  return sync_folder(folder_of(path));
}

// Writes a character device or FIFO in place. O_NONBLOCK only to open: a
// FIFO without a reader is refused at once instead of waited for.
Status write_stream(const std::string& path, const std::string& contents) {
  const int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 && errno == ENXIO)
    return usage_error("'" + path + "' is a FIFO that nobody reads: start its reader first, or write to a file");
  if (fd < 0) return io_error("opening", path, errno);
  struct stat st {};
  Status s = Status::ok();
  if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
    s = usage_error("'" + path + "' changed while it was being opened: try again");
  if (s.is_ok() && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) s = io_error("opening", path, errno);
  if (s.is_ok()) s = write_all(fd, contents, path);
  if (close(fd) != 0 && s.is_ok()) s = io_error("closing", path, errno);
  return s;
}

// The regular file a symbolic link at `path` leads to: renaming over the
// link would replace the link, not the file.
Result<std::string> link_target(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char resolved[PATH_MAX];
  if (!realpath(path.c_str(), resolved))
    return usage_error("cannot follow the link '" + path + "': " + std::strerror(errno) + ": name the file itself");
  return std::string(resolved);
}

}  // namespace

Result<OutputKind> output_kind(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    struct stat link {};
    if (err == ENOENT && lstat(path.c_str(), &link) == 0)
      return usage_error("'" + path + "' is a symbolic link to nothing: name a file, or remove the link");
    if (err == ENOENT) return OutputKind::kNew;
    return usage_error("cannot write '" + path + "': " + std::strerror(err));
  }
  if (S_ISREG(st.st_mode)) return OutputKind::kFile;
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return OutputKind::kStream;
  const std::string kind = file_kind_name(st.st_mode);
  if (S_ISDIR(st.st_mode))
    return usage_error("'" + path + "' is a folder: name a file in it (e.g. " +
                       (path.back() == '/' ? path : path + "/") + "results.json)");
  return usage_error("'" + path + "' is " + kind + ", not a file omni-bench can write: name a regular file");
}

Status write_file_atomically(const std::string& path, const std::string& contents) {
  auto kind = output_kind(path);
  if (!kind.is_ok()) return kind.status();
  if (kind.value() == OutputKind::kStream) return write_stream(path, contents);
  auto target = link_target(path);
  if (!target.is_ok()) return target.status();
  return replace_file(target.value(), contents);
}

Status check_output_path(const std::string& path, bool force, const std::string& flag_hint) {
  auto kind = output_kind(path);
  if (!kind.is_ok()) return kind.status();
  if (kind.value() != OutputKind::kFile || force) return Status::ok();
  return usage_error("'" + path + "' already exists and will not be overwritten: choose another file name, or pass " +
                     flag_hint);
}

}  // namespace omnib
