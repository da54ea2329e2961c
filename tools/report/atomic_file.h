// Writing result files so that a reader never sees half a file and nothing is
// replaced by accident.
#pragma once

#include <string>

#include "engine/base/status.h"

namespace omnib {

// Writes `contents` to a new temporary file beside `path` (an unpredictable
// name, created with O_EXCL|O_NOFOLLOW, so nothing planted there, a symlink
// included, is ever opened or written through), syncs it, renames it over
// `path` (atomic on POSIX file systems) and syncs the folder. Blocks on disk
// I/O. A folder that cannot be written is a usage error.
Status write_file_atomically(const std::string& path, const std::string& contents);

// Usage error when `path` exists and replacing it was not asked for.
Status refuse_to_overwrite(const std::string& path, bool force, const std::string& flag_hint);

}  // namespace omnib
