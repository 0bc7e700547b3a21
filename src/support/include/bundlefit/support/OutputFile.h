//===- OutputFile.h - The one way bundlefit writes a report or output file -===//
//
// Every file a command writes (-o, --json, --html, run outputs, profiles)
// goes through writeOutputFile: the bytes are written to a new temporary file
// beside the target and renamed over it, so a reader never sees half a file.
// A target that exists and is not a regular file (a symbolic link, FIFO,
// device node, directory or socket) is refused, never followed or replaced.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace bundlefit {

/// Writes `bytes` to `path` atomically. Throws Error(CannotWrite) naming the
/// path when the target is not a regular file or any write, flush or rename
/// fails (a full disk included); no temporary file is left behind.
void writeOutputFile(const std::string &path, const std::string &bytes);

/// Checks that `dir` can hold outputs: it is a directory, or it can be
/// created (its nearest existing ancestor is writable). Throws
/// Error(CannotWrite) naming `dir` and, in the message, `what` ("bundle
/// directory"). Creates nothing, so a command that fails later leaves no
/// empty directory; called before the long work, so a typo fails at once.
void checkDirectoryCreatable(const std::string &dir, const std::string &what);

/// Flushes stdout; throws Error(CannotWrite) if anything written to it was
/// lost (`bundlefit plan m.onnx > /dev/full`).
void flushStandardOutput();

} // namespace bundlefit
