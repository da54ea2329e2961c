// Reading input files that come from anywhere (result files, traces, .npy
// inputs) without ever waiting on a stream or holding more than a stated
// size: only regular files are opened (never a FIFO, a device or a socket,
// which could block or never end), and whole-file reads stop at a limit.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "engine/status.h"

namespace omnib {

// "a folder", "a FIFO (named pipe)", "a socket", "a character device",
// "a block device", "a symbolic link", "a regular file".
const char* file_kind_name(mode_t mode);

// Owns a descriptor of a regular file opened for reading. Refusals are usage
// errors "PATH: is a FIFO (named pipe), not a regular file: HINT".
class RegularFile {
 public:
  RegularFile() = default;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  // Refuses what is not a regular file before opening it (a device is never
  // opened), then opens without blocking and checks the same again on the
  // descriptor (the path may have been swapped in between). `hint` says
  // what the command reads instead.
  Status open_for_reading(const std::string& path, const std::string& hint);
  uint64_t size() const { return size_; }
  // Reads up to n bytes at `offset`; fewer only at the end of the file.
  Result<size_t> read_at(uint64_t offset, void* out, size_t n) const;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The whole of a regular file, read once into one string: a usage error for
// anything else (FIFO, device, folder...), and for a file larger than
// `max_bytes` (the message gives both sizes). `what` names the kind of file
// in messages ("result file"), `hint` says how to get a good one.
Result<std::string> read_regular_file(const std::string& path, uint64_t max_bytes, const std::string& what,
                                      const std::string& hint);

}  // namespace omnib
