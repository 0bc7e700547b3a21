#include "bundlefit/support/OutputFile.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace bundlefit {

/// What an open OutputSet holds: what to do at commit, and to undo.
struct OutputSet::State {
  struct Staged {
    int phase; ///< 0: files, 1: directories (which may carry files over).
    std::function<void()> commit, discard;
  };
  std::vector<Staged> staged;
  std::set<std::string> targets; ///< Absolute paths of staged files.
  bool holdStandardOutput = false;
  std::streambuf *standardOutput = nullptr; ///< std::cout's own, while held.
  std::stringbuf held;

  void add(Staged output) {
    if (holdStandardOutput && !standardOutput) {
      std::cout.flush();
      standardOutput = std::cout.rdbuf(&held);
    }
    staged.push_back(std::move(output));
  }
  /// Gives std::cout its buffer back, printing what was held when `print`.
  void releaseStandardOutput(bool print) {
    if (!standardOutput)
      return;
    std::cout.rdbuf(standardOutput);
    standardOutput = nullptr;
    if (print)
      std::cout << held.str();
    held.str("");
  }
};

namespace {

/// The open set of this thread (nullptr: outputs go in place at once).
thread_local OutputSet::State *currentSet = nullptr;

Error cannotWrite(const std::string &path, const std::string &why) {
  return Error(ExitCode::CannotWrite, path + ": cannot write file: " + why);
}

/// Why `path` may not be replaced by an output file, or "".
std::string whyNotReplaceable(const std::string &path) {
  if (path.find('\0') != std::string::npos)
    return "the path holds a NUL byte";
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0)
    return "";
  if (!S_ISREG(info.st_mode))
    return std::string("it is ") + fileKindName(info.st_mode) +
           ", not a regular file; bundlefit does not replace it";
  if (isInputFile(path))
    return "it is a file this command reads; bundlefit does not replace an input";
  return "";
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

/// Writes a new file `path` that must not exist (O_EXCL|O_NOFOLLOW: never
/// through a link planted at the name). Returns errno, 0 on success; removes
/// the file on failure.
int writeNewFile(const std::string &path, const std::string &bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0)
    return errno;
  bool ok = writeAll(fd, bytes);
  int savedErrno = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    savedErrno = errno;
  }
  if (ok)
    return 0;
  ::unlink(path.c_str());
  return savedErrno ? savedErrno : EIO;
}

/// Renames the finished temporary file over `path`, checked once more just
/// before: a link or FIFO created meanwhile is refused, not replaced.
void putFileInPlace(const std::string &temporary, const std::string &path) {
  std::string why = whyNotReplaceable(path);
  if (!why.empty()) {
    ::unlink(temporary.c_str());
    throw cannotWrite(path, why);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    int savedErrno = errno;
    ::unlink(temporary.c_str());
    throw cannotWrite(path, std::strerror(savedErrno));
  }
}

} // namespace

void writeOutputFile(const std::string &path, const std::string &bytes) {
  std::string why = whyNotReplaceable(path);
  if (!why.empty())
    throw cannotWrite(path, why);
  static std::atomic<unsigned> serial{0};
  std::string temporary =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  if (int error = writeNewFile(temporary, bytes))
    throw cannotWrite(path, std::strerror(error));
  if (!currentSet) {
    putFileInPlace(temporary, path);
    return;
  }
  std::error_code ec;
  const std::string absolute = fs::absolute(path, ec).lexically_normal().string();
  if (!currentSet->targets.insert(absolute).second) {
    ::unlink(temporary.c_str());
    throw cannotWrite(path, "two outputs of this command name the same file");
  }
  currentSet->add({0, [temporary, path] { putFileInPlace(temporary, path); },
                   [temporary] { ::unlink(temporary.c_str()); }});
}

void checkOutputFile(const std::string &path, const std::string &option) {
  const std::string named = (option.empty() ? "" : option + " ") + path;
  std::string why = whyNotReplaceable(path);
  if (!why.empty())
    throw Error(ExitCode::CannotWrite, named + ": cannot write file: " + why);
  // A probe file beside the target: its directory exists and is writable.
  std::string probe = path + ".probe." + std::to_string(::getpid());
  if (writeNewFile(probe, "") != 0)
    throw Error(ExitCode::CannotWrite, named + ": cannot write file");
  ::unlink(probe.c_str());
}

OutputSet::OutputSet(bool holdStandardOutput)
    : state_(std::make_unique<State>()), outer_(currentSet) {
  state_->holdStandardOutput = holdStandardOutput;
  currentSet = state_.get();
}

OutputSet::~OutputSet() {
  for (State::Staged &output : state_->staged)
    if (output.discard)
      output.discard();
  state_->releaseStandardOutput(false);
  currentSet = outer_;
}

void OutputSet::commit() {
  for (int phase : {0, 1})
    for (State::Staged &output : state_->staged)
      if (output.phase == phase) {
        std::function<void()> commit = std::move(output.commit);
        output.discard = nullptr; // committed or failed: nothing to undo
        commit();
      }
  state_->staged.clear();
  state_->targets.clear();
  state_->releaseStandardOutput(true);
}

ImmediateOutputs::ImmediateOutputs() : suspended_(currentSet) { currentSet = nullptr; }
ImmediateOutputs::~ImmediateOutputs() { currentSet = suspended_; }

//===----------------------------------------------------------------------===//
// Directories
//===----------------------------------------------------------------------===//

namespace {

/// Staging directories are ".bundlefit-staging-<name>-<pid>" beside the target.
constexpr const char *kStagingPrefix = ".bundlefit-staging-";

/// Removes staging directories killed runs left in `parent`. Called under the
/// parent's lock, which every publish holds while its staging directory
/// exists, so any staging directory seen here belongs to a process that died.
void removeLeftoverStaging(const fs::path &parent) {
  std::error_code ec;
  std::vector<fs::path> leftovers;
  for (const auto &entry : fs::directory_iterator(parent, ec))
    if (entry.path().filename().string().rfind(kStagingPrefix, 0) == 0)
      leftovers.push_back(entry.path());
  for (const fs::path &path : leftovers)
    fs::remove_all(path, ec);
}

/// Swaps two directory entries in one step (Linux renameat2 RENAME_EXCHANGE).
bool exchangeDirectories(const fs::path &a, const fs::path &b) {
  return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
}

/// An exclusive flock on a directory, held from staging to publish. A
/// thread that holds one on a directory already (a command with two outputs
/// in one parent) shares it instead of waiting for itself.
class ParentLock {
public:
  explicit ParentLock(const fs::path &dir) : dir_(dir.string()) {
    if (held()[dir_]++ > 0)
      return;
    fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0)
      return;
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
    // A staging directory seen while holding the lock belongs to a run that
    // died (every run holds it while its staging directory exists).
    removeLeftoverStaging(dir);
  }
  ~ParentLock() {
    if (--held()[dir_] == 0)
      held().erase(dir_);
    if (fd_ >= 0)
      ::close(fd_);
  }
  ParentLock(const ParentLock &) = delete;
  ParentLock &operator=(const ParentLock &) = delete;

private:
  static std::map<std::string, int> &held() {
    thread_local std::map<std::string, int> directories;
    return directories;
  }
  std::string dir_;
  int fd_ = -1;
};

} // namespace

/// Whether this process's working directory is `dir` or lies inside it. Such
/// a directory is written in place (OutputDirectory::State::inPlace): one
/// that traded places with its new contents would leave the shell that ran
/// `compile -o .` in a deleted directory.
bool holdsWorkingDirectory(const fs::path &dir) {
  std::error_code ec;
  const fs::path cwd = fs::canonical(fs::current_path(ec), ec);
  const fs::path resolved = fs::canonical(dir, ec);
  if (ec)
    return false;
  auto [end, unused] = std::mismatch(resolved.begin(), resolved.end(), cwd.begin(), cwd.end());
  (void)unused;
  return end == resolved.end();
}

struct OutputDirectory::State {
  fs::path target, parent, staging;
  /// The working directory is in `target`: the staging directory is inside
  /// it and each entry is renamed into place on its own (every file whole,
  /// but not all of them in one step).
  bool inPlace = false;
  std::string stagingText;
  std::string shown, what; ///< The path as given, and "bundle", "--link-dir"...
  std::unique_ptr<ParentLock> lock;
  bool done = false;

  Error fail(const std::string &why) const {
    return Error(ExitCode::CannotWrite, shown + ": cannot write " + what + ": " + why);
  }
  void discard() {
    if (!done) {
      std::error_code ec;
      fs::remove_all(staging, ec);
      done = true;
    }
    lock.reset();
  }
  ~State() { discard(); }
  void commit();
};

OutputDirectory::OutputDirectory(const std::string &dir, const std::string &what)
    : state_(std::make_shared<State>()) {
  State &s = *state_;
  s.shown = dir;
  s.what = what;
  std::error_code ec;
  // "out/", "." and "a/.." name the directory itself (`compile -o .` once
  // staged inside "." and failed naming its staging directory).
  fs::path target = fs::absolute(dir, ec).lexically_normal();
  if (target.filename().empty())
    target = target.parent_path();
  if (dir.empty() || dir.find('\0') != std::string::npos || target.filename().empty() ||
      target == target.root_path())
    throw s.fail("not a directory bundlefit can create or replace");
  s.target = target;
  s.parent = target.parent_path();
  struct stat info;
  if (::lstat(s.target.c_str(), &info) == 0 && !S_ISDIR(info.st_mode))
    throw s.fail(S_ISLNK(info.st_mode) ? "it is a symbolic link; bundlefit does not replace it"
                                       : "it exists and is not a directory");
  s.inPlace = holdsWorkingDirectory(s.target);
  const fs::path home = s.inPlace ? s.target : s.parent;
  fs::create_directories(home, ec);
  // Publishes into one directory take turns: two compiles into one
  // directory never mix their files.
  s.lock = std::make_unique<ParentLock>(home);
  static std::atomic<unsigned> serial{0};
  s.staging = home / (kStagingPrefix + target.filename().string() + "-" +
                      std::to_string(::getpid()) + "-" + std::to_string(serial++));
  s.stagingText = s.staging.string();
  if (::mkdir(s.staging.c_str(), 0777) != 0) {
    int error = errno;
    s.done = true; // not ours to remove
    throw s.fail(error == EACCES || error == EROFS
                     ? (s.inPlace ? "it is not writable"
                                  : "its parent directory " + s.parent.string() +
                                        " is not writable (the new contents are staged there, "
                                        "beside it)")
                     : "staging directory " + s.staging.string() + ": " + std::strerror(error));
  }
}

OutputDirectory::~OutputDirectory() = default; // State::~State discards

const std::string &OutputDirectory::path() const { return state_->stagingText; }

void OutputDirectory::writeFile(const std::string &name, const std::string &bytes) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    throw state_->fail("'" + name + "' is not a file name");
  if (int error = writeNewFile((state_->staging / name).string(), bytes))
    throw state_->fail("writing " + name + " failed: " + std::strerror(error));
}

void OutputDirectory::publish() {
  std::shared_ptr<State> state = state_;
  if (!currentSet) {
    state->commit();
    return;
  }
  currentSet->add({1, [state] { state->commit(); }, [state] { state->discard(); }});
}

void OutputDirectory::State::commit() {
  std::error_code ec;
  auto failAndDiscard = [&](const std::string &why) {
    Error error = fail(why);
    discard();
    return error;
  };
  // Why the new entry `name` may not replace the old one, or "".
  auto whyNotReplaced = [&](const std::string &name) -> std::string {
    struct stat old, replacement;
    if (::lstat((target / name).c_str(), &old) != 0 ||
        ::lstat((staging / name).c_str(), &replacement) != 0)
      return "";
    if ((old.st_mode & S_IFMT) != (replacement.st_mode & S_IFMT) ||
        !(S_ISREG(old.st_mode) || S_ISDIR(old.st_mode)))
      return name + " exists and is " + fileKindName(old.st_mode) +
             "; bundlefit does not replace it with " + fileKindName(replacement.st_mode);
    if (S_ISREG(old.st_mode) && isInputFile((target / name).string()))
      return name + " is a file this command reads; bundlefit does not replace an input";
    return "";
  };
  if (inPlace) {
    std::vector<std::string> names;
    for (const auto &entry : fs::directory_iterator(staging, ec))
      names.push_back(entry.path().filename().string());
    for (const std::string &name : names)
      if (std::string why = whyNotReplaced(name); !why.empty())
        throw failAndDiscard(why);
    for (const std::string &name : names) {
      const fs::path from = staging / name, to = target / name;
      // A directory trades places with the old one, which is then removed
      // with the staging directory; a file is renamed over the old one.
      if (fs::is_directory(to, ec) ? !exchangeDirectories(from, to)
                                   : ::rename(from.c_str(), to.c_str()) != 0)
        throw failAndDiscard(name + ": " + std::strerror(errno));
    }
    discard();
    return;
  }
  struct stat info;
  if (::lstat(target.c_str(), &info) != 0) {
    if (::rename(staging.c_str(), target.c_str()) != 0)
      throw failAndDiscard(std::strerror(errno));
    done = true;
    discard();
    return;
  }
  if (!S_ISDIR(info.st_mode))
    throw failAndDiscard(S_ISLNK(info.st_mode)
                             ? "it is a symbolic link; bundlefit does not replace it"
                             : "it exists and is not a directory");
  // The new directory keeps whatever else the old one held (another
  // network's bundle, firmware sources): regular files and links are
  // hard-linked across. A new entry replaces an old one of its own kind
  // only; anything else is refused rather than lost or written through.
  ::chmod(staging.c_str(), info.st_mode & 07777);
  for (const auto &entry : fs::directory_iterator(target, ec)) {
    const std::string name = entry.path().filename().string();
    struct stat old, replacement;
    if (name.rfind(kStagingPrefix, 0) == 0 || ::lstat(entry.path().c_str(), &old) != 0)
      continue; // a killed in-place run's staging directory goes with the old contents
    if (::lstat((staging / name).c_str(), &replacement) == 0) {
      if (std::string why = whyNotReplaced(name); !why.empty())
        throw failAndDiscard(why);
      continue;
    }
    if (!S_ISREG(old.st_mode) && !S_ISLNK(old.st_mode))
      throw failAndDiscard(name + " is not a file bundlefit writes and not a regular file; "
                                  "write into an empty directory or one holding only files");
    if (::linkat(AT_FDCWD, entry.path().c_str(), AT_FDCWD, (staging / name).c_str(), 0) != 0)
      throw failAndDiscard("keeping " + name + ": " + std::strerror(errno));
  }
  if (ec)
    throw failAndDiscard(ec.message());
  // One atomic step: at every moment `target` holds the complete old or the
  // complete new contents; the old ones end up under the staging name.
  if (!exchangeDirectories(staging, target)) {
    if (errno != EINVAL && errno != ENOSYS)
      throw failAndDiscard(std::strerror(errno));
    // A file system without RENAME_EXCHANGE: two renames, a moment with no
    // directory at all but never a mixed one.
    const fs::path old = staging.string() + "-old";
    if (::rename(target.c_str(), old.c_str()) != 0)
      throw failAndDiscard(std::strerror(errno));
    if (::rename(staging.c_str(), target.c_str()) != 0) {
      int saved = errno;
      ::rename(old.c_str(), target.c_str());
      throw failAndDiscard(std::strerror(saved));
    }
    fs::remove_all(old, ec);
  }
  discard(); // removes the old contents, now under the staging name
}

void checkDirectoryCreatable(const std::string &dir, const std::string &what) {
  std::error_code ec;
  struct stat info;
  if (::lstat(dir.c_str(), &info) == 0 && S_ISLNK(info.st_mode))
    throw Error(ExitCode::CannotWrite,
                dir + ": is a symbolic link (" + what + "); bundlefit does not write through it");
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Error(ExitCode::CannotWrite, dir + ": exists and is not a directory (" + what + ")");
  fs::path existing = fs::absolute(dir, ec);
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec) || ::access(existing.c_str(), W_OK | X_OK) != 0)
    throw Error(ExitCode::CannotWrite, dir + ": cannot create the " + what + " (" +
                                           existing.string() + " is not writable)");
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

} // namespace bundlefit
