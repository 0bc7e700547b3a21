#include "bundlefit/support/InputFile.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"
#include "bundlefit/support/MemoryBudget.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace bundlefit {

namespace {

/// (device, inode) of every input file checked so far.
struct InputIdentities {
  std::mutex mutex;
  std::set<std::pair<dev_t, ino_t>> files;
};

InputIdentities &inputs() {
  static InputIdentities identities;
  return identities;
}

Error badInput(const std::string &path, const std::string &what, const std::string &why) {
  return Error(ExitCode::BadInputFile, path + ": cannot read " + what + ": " + why);
}

/// stat() of `path` checked as checkInputFile documents.
struct stat statInput(const std::string &path, const std::string &what, uint64_t maxBytes) {
  if (path.find('\0') != std::string::npos)
    throw Error(ExitCode::Usage, what + " path holds a NUL byte, which no file name can");
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    throw badInput(path, what, errno == ENOENT ? "no such file" : std::strerror(errno));
  if (!S_ISREG(info.st_mode)) {
    struct stat link;
    const bool viaLink = ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
    throw badInput(path, what,
                   std::string(viaLink ? "it is a symbolic link to " : "it is ") +
                       fileKindName(info.st_mode) + ", not a regular file");
  }
  const uint64_t limit = maxBytes ? maxBytes : memoryBudget();
  if (uint64_t(info.st_size) > limit)
    throw badInput(path, what,
                   "it holds " + withThousands(uint64_t(info.st_size)) + " bytes, more than " +
                       withThousands(limit) +
                       (maxBytes ? std::string(" (the most a ") + what + " may hold)"
                                 : std::string(" (the memory budget, --max-memory)")));
  std::lock_guard<std::mutex> lock(inputs().mutex);
  inputs().files.insert({info.st_dev, info.st_ino});
  return info;
}

} // namespace

uint64_t checkInputFile(const std::string &path, const std::string &what, uint64_t maxBytes) {
  return uint64_t(statInput(path, what, maxBytes).st_size);
}

std::string readInputFile(const std::string &path, const std::string &what, uint64_t maxBytes) {
  statInput(path, what, maxBytes);
  // O_NONBLOCK: a FIFO put in the file's place since the check cannot block
  // the open; fstat below then refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw badInput(path, what, std::strerror(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      uint64_t(info.st_size) > (maxBytes ? maxBytes : memoryBudget())) {
    ::close(fd);
    throw badInput(path, what, "it changed while being opened");
  }
  std::string bytes(size_t(info.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      int saved = errno;
      ::close(fd);
      throw badInput(path, what,
                     got == 0 ? "it became shorter while being read" : std::strerror(saved));
    }
    done += size_t(got);
  }
  ::close(fd);
  return bytes;
}

void noteInputFile(const std::string &path) {
  struct stat info;
  if (path.find('\0') != std::string::npos || ::stat(path.c_str(), &info) != 0 ||
      !S_ISREG(info.st_mode))
    return;
  std::lock_guard<std::mutex> lock(inputs().mutex);
  inputs().files.insert({info.st_dev, info.st_ino});
}

const char *fileKindName(unsigned mode) {
  if (S_ISREG(mode))
    return "a regular file";
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

bool isInputFile(const std::string &path) {
  struct stat info;
  if (path.find('\0') != std::string::npos || ::stat(path.c_str(), &info) != 0)
    return false;
  std::lock_guard<std::mutex> lock(inputs().mutex);
  return inputs().files.count({info.st_dev, info.st_ino}) != 0;
}

} // namespace bundlefit
