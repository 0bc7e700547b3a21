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

/// Flushes stdout; throws Error(CannotWrite) if anything written to it was
/// lost (`bundlefit plan m.onnx > /dev/full`).
void flushStandardOutput();

} // namespace bundlefit
