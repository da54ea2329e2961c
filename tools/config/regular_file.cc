#include "tools/config/regular_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tools/size_parse.h"

namespace omnib {
namespace {

Status refuse_kind(const std::string& path, const struct stat& st, const std::string& hint) {
  if (S_ISREG(st.st_mode)) return Status::ok();
  return usage_error(path + ": is " + file_kind_name(st.st_mode) + ", not a regular file: " + hint);
}

}  // namespace

const char* file_kind_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) close(fd_);
}

Status RegularFile::open_for_reading(const std::string& path, const std::string& hint) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return usage_error(path + ": cannot read it (" + std::strerror(errno) + "; does it exist, and is it readable?)");
  OMNIB_RETURN_IF_ERROR(refuse_kind(path, st, hint));
  // O_NONBLOCK: should a FIFO be swapped in after the check, opening it does
  // not wait for a writer; fstat below then refuses it.
  fd_ = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) return usage_error(path + ": cannot be opened (" + std::strerror(errno) + ")");
  if (fstat(fd_, &st) != 0) return usage_error(path + ": cannot be read (" + std::strerror(errno) + ")");
  OMNIB_RETURN_IF_ERROR(refuse_kind(path, st, hint));
  size_ = static_cast<uint64_t>(st.st_size);
  return Status::ok();
}

Result<size_t> RegularFile::read_at(uint64_t offset, void* out, size_t n) const {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = pread(fd_, static_cast<char*>(out) + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return usage_error(std::string("reading: ") + std::strerror(errno));
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

Result<std::string> read_regular_file(const std::string& path, uint64_t max_bytes, const std::string& what,
                                      const std::string& hint) {
  RegularFile f;
  OMNIB_RETURN_IF_ERROR(f.open_for_reading(path, hint).with_context(what + " "));
  if (f.size() > max_bytes)
    return usage_error(what + " " + path + ": is " + format_bytes(static_cast<double>(f.size())) +
                       ", more than the " + format_size(max_bytes) + " omni-bench reads: " + hint);
  // One read of at most max_bytes + 1: a file that grew since fstat is
  // noticed, never read on without end.
  std::string text(static_cast<size_t>(f.size()) + 1, '\0');
  auto got = f.read_at(0, text.data(), text.size());
  if (!got.is_ok()) return got.status().with_context(what + " " + path + ": ");
  if (got.value() > max_bytes)
    return usage_error(what + " " + path + ": grew past " + format_size(max_bytes) + " while being read: " + hint);
  text.resize(got.value());
  return text;
}

}  // namespace omnib
