#include "bundlefit/support/OutputFile.h"

#include "bundlefit/support/Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace bundlefit {

namespace {

/// What a non-regular file is, for the error message.
const char *fileKind(mode_t mode) {
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

Error cannotWrite(const std::string &path, const std::string &why) {
  return Error(ExitCode::CannotWrite, path + ": cannot write file: " + why);
}

/// Writes all of `bytes` to `fd`, retrying short writes.
bool writeAll(int fd, const std::string &bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t written = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    done += size_t(written);
  }
  return true;
}

} // namespace

void writeOutputFile(const std::string &path, const std::string &bytes) {
  struct stat info;
  if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    throw cannotWrite(path, std::string("it is ") + fileKind(info.st_mode) +
                                ", not a regular file; bundlefit does not replace it");
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  // O_EXCL|O_NOFOLLOW: never write through a link planted at the temporary name.
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0)
    throw cannotWrite(path, std::strerror(errno));
  bool ok = writeAll(fd, bytes);
  int savedErrno = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    savedErrno = errno;
  }
  if (!ok) {
    ::unlink(temporary.c_str());
    throw cannotWrite(path, std::strerror(savedErrno));
  }
  // Checked once more just before the rename, which would replace a link
  // or FIFO created meanwhile rather than write through it.
  if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    ::unlink(temporary.c_str());
    throw cannotWrite(path, std::string("it is ") + fileKind(info.st_mode) +
                                ", not a regular file; bundlefit does not replace it");
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    savedErrno = errno;
    ::unlink(temporary.c_str());
    throw cannotWrite(path, std::strerror(savedErrno));
  }
}

void flushStandardOutput() {
  errno = 0;
  std::cout.flush();
  bool lost = !std::cout.good();
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    lost = true;
  if (lost)
    throw Error(ExitCode::CannotWrite,
                std::string("standard output: cannot write") +
                    (errno ? std::string(": ") + std::strerror(errno) : std::string()));
}

void checkDirectoryCreatable(const std::string &dir, const std::string &what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error(ExitCode::CannotWrite, dir + ": exists and is not a directory (" + what + ")");
  fs::path existing = fs::absolute(dir, ec);
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec) || ::access(existing.c_str(), W_OK | X_OK) != 0)
    throw Error(ExitCode::CannotWrite, dir + ": cannot create the " + what + " (" +
                                           existing.string() + " is not writable)");
}

} // namespace bundlefit
