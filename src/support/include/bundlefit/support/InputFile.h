//===- InputFile.h - The one way bundlefit opens a file it reads -----------===//
//
// Every file a command reads (the model, a profile, a device file, a .npy, a
// model list, a cache entry) is checked before a byte is read: it must be a
// regular file (a symbolic link to one is fine) whose length is known and
// within a limit, so a link to /dev/zero, a FIFO or a 40 GB file is refused
// at once instead of being read forever or until memory runs out. The path
// must not hold a NUL byte (the C library would read another file).
//
// Each file checked is remembered by its device and inode: no output of the
// same process may replace it (OutputFile.h refuses `plan m.onnx --json
// m.onnx`, however the path is spelled).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace bundlefit {

/// Checks `path` as above and returns its length in bytes. `maxBytes` 0 means
/// the memory budget (MemoryBudget.h). Throws Error(BadInputFile) naming the
/// path and `what` ("model", "profile"...): missing, not a regular file, or
/// longer than the limit.
uint64_t checkInputFile(const std::string &path, const std::string &what, uint64_t maxBytes = 0);

/// checkInputFile, then the whole file, exactly the length it was checked at.
std::string readInputFile(const std::string &path, const std::string &what, uint64_t maxBytes = 0);

/// Remembers `path` as an input (as checkInputFile does) when it exists, and
/// checks nothing: the command line notes its input paths as it parses them,
/// so an output path equal to one fails before any work.
void noteInputFile(const std::string &path);

/// What a file of stat mode `mode` is, for messages: "a regular file", "a
/// directory", "a FIFO", "a device", "a socket", "a symbolic link".
const char *fileKindName(unsigned mode);

/// Whether `path` exists and is the same file (device and inode) as one this
/// process checked as an input.
bool isInputFile(const std::string &path);

} // namespace bundlefit
