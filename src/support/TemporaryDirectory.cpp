#include "bundlefit/support/TemporaryDirectory.h"

#include "bundlefit/support/Error.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace bundlefit {

namespace {

/// The pid in "bundlefit-<kind>-<pid>-XXXXXX", or 0.
pid_t pidInName(const std::string &name) {
  if (name.rfind("bundlefit-", 0) != 0)
    return 0;
  size_t end = name.rfind('-');
  if (end == std::string::npos)
    return 0;
  size_t start = name.rfind('-', end - 1);
  if (start == std::string::npos || start + 1 >= end)
    return 0;
  const std::string digits = name.substr(start + 1, end - start - 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
    return 0;
  return pid_t(std::atol(digits.c_str()));
}

} // namespace

void removeLeftoverTemporaryDirectories() {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec)
    return;
  for (const auto &entry : fs::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    pid_t pid = pidInName(name);
    struct stat info;
    if (pid <= 0 || ::lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != ::getuid())
      continue;
    // A process that exists (kill succeeds, or is not ours to signal) may
    // still be using its directory.
    if (::kill(pid, 0) == 0 || errno != ESRCH)
      continue;
    std::error_code ignored;
    fs::remove_all(entry.path(), ignored);
  }
}

TemporaryDirectory::TemporaryDirectory(const std::string &kind, const std::string &why) {
  removeLeftoverTemporaryDirectories();
  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) /
                         ("bundlefit-" + kind + "-" + std::to_string(::getpid()) + "-XXXXXX"))
                            .string();
  if (!::mkdtemp(pattern.data()))
    throw Error(ExitCode::CannotWrite, pattern + ": cannot create a temporary directory " + why);
  path_ = pattern;
}

TemporaryDirectory::TemporaryDirectory(TemporaryDirectory &&other) noexcept
    : path_(std::move(other.path_)) {
  other.path_.clear();
}

std::string TemporaryDirectory::keep() {
  std::string kept = path_ + "-kept";
  if (::rename(path_.c_str(), kept.c_str()) != 0)
    kept = path_;
  path_.clear();
  return kept;
}

TemporaryDirectory::~TemporaryDirectory() {
  if (path_.empty())
    return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

} // namespace bundlefit
