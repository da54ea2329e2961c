// Scratch special files for the tests of outputs and inputs that are not
// regular files: device nodes made with mknod in a test's own folder (never
// the machine's /dev/null or /dev/zero), FIFOs, and a full file system.
#pragma once

#include <string>

namespace omnib::testing {

// A character device node at `path` with the numbers of /dev/null (1, 3) or
// /dev/zero (1, 5). False when this process may not make one (not root): the
// test should skip.
bool make_char_device(const std::string& path, unsigned major, unsigned minor);
bool is_char_device(const std::string& path);

// A 64 KiB tmpfs mounted on a fresh folder and filled up, so that any write
// in it fails with ENOSPC; unmounted (and the folder removed) when it goes.
class FullDisk {
 public:
  explicit FullDisk(const std::string& folder);
  ~FullDisk();
  FullDisk(const FullDisk&) = delete;
  FullDisk& operator=(const FullDisk&) = delete;
  bool mounted() const { return mounted_; }  // false: not root, the test should skip
  const std::string& folder() const { return folder_; }

 private:
  std::string folder_;
  bool mounted_ = false;
};

}  // namespace omnib::testing
