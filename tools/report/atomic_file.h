// Writing result files (-J, --trace, compare --json, sweep's checkpoints) so
// that a reader never sees half a file, nothing is replaced by accident, and
// nothing that is not a file is ever replaced (docs/exit-codes.md, "Output
// files"):
//   - no file yet, or a regular file: a new temporary file beside it is
//     written, synced and renamed over it (atomic on POSIX file systems);
//   - a character device or a FIFO (/dev/null, /dev/stdout, a named pipe): a
//     stream, written in place, never replaced;
//   - a folder, socket, block device or anything else: a usage error;
//   - a symbolic link is followed, and the rules apply to what it points to
//     (a link to a regular file has that file replaced, the link stays; a
//     link to nothing is a usage error).
#pragma once

#include <string>

#include "engine/status.h"

namespace omnib {

enum class OutputKind {
  kNew,      // nothing there yet: created
  kFile,     // a regular file (or a link to one): replaced atomically
  kStream,   // a character device or FIFO (or a link to one): written in place
};

// What `path` is as an output; a usage error saying what to do for anything
// that cannot be one (a folder, a socket, a block device, a dangling link).
Result<OutputKind> output_kind(const std::string& path);

// Writes `contents` to `path` by the rules above. Replacing: the temporary
// file has an unpredictable name and is created with O_EXCL|O_NOFOLLOW, so
// nothing planted there, a symlink included, is ever opened or written
// through; SIGINT, SIGTERM or SIGHUP while it exists remove it before the
// process ends (unless the process handles them itself, and then the write
// finishes). Blocks on disk I/O, and on a FIFO until its reader takes the
// bytes. Errors the user can fix (a full disk, a folder that cannot be
// written, a FIFO without a reader) are usage errors that say so.
Status write_file_atomically(const std::string& path, const std::string& contents);

// Checks an output path before a run: a usage error when it cannot be
// written (see output_kind), or when it is an existing regular file and
// `force` was not given (`flag_hint` says how to replace it). A stream is
// never refused: writing it replaces nothing.
Status check_output_path(const std::string& path, bool force, const std::string& flag_hint);

}  // namespace omnib
