//===- OutputFile.h - The one way bundlefit writes an output ---------------===//
//
// Every file a command writes (-o, --json, --html, run outputs, profiles,
// dumps) goes through writeOutputFile, and every directory it writes (a
// bundle, --output-dir, --link-dir) through OutputDirectory:
//
// - A file is written to a new temporary file beside the target and renamed
//   over it, so a reader never sees half a file. A target that exists and is
//   not a regular file (a symbolic link, FIFO, device node, directory or
//   socket) is refused, never followed or replaced.
// - A directory is built fresh under a staging name beside it and put in
//   place in one rename (or one renameat2(RENAME_EXCHANGE) with the old one,
//   whose other entries it keeps), so it holds the complete old or the
//   complete new contents at every moment, SIGKILL included. Nothing is ever
//   written through a symbolic link planted in it.
// - No output may be a file the command read (the model, a profile...:
//   InputFile.h), however its path is spelled.
//
// While an OutputSet is open (the command-line tools open one around each
// command), outputs are staged only: nothing reaches its place until every
// output of the command has been written and the set commits, so a command
// that fails half-way (a --json path that is a directory, an unwritable
// --dump-graph-DAG) leaves every old output as it was. Without a set (library
// callers, the Python module) each output is put in place as it is written.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>

namespace bundlefit {

/// Writes `bytes` to `path` atomically (staged while an OutputSet is open).
/// Throws Error(CannotWrite) naming the path when the target is not a regular
/// file, is an input of the command, or any write, flush or rename fails (a
/// full disk included); no temporary file is left behind.
void writeOutputFile(const std::string &path, const std::string &bytes);

/// Error(CannotWrite) naming `path` (and `option`) now, before any long work,
/// when an output could not be written there later: its directory is not
/// writable, or it exists and is not a regular file, or it is an input file.
void checkOutputFile(const std::string &path, const std::string &option = "");

/// The outputs of one command, put in place together. Opening a set makes it
/// the current one of this thread; commit() renames every staged file into
/// place, then every staged directory; destroying a set that was not
/// committed removes everything it staged.
///
/// With `holdStandardOutput`, what the command prints on std::cout after its
/// first output was staged is held back until commit() (and dropped if the
/// set is destroyed uncommitted): "bundle written to D" never reaches stdout
/// when D could not be put in place. A command that stages nothing (`fit
/// --batch`'s JSON lines) prints as it goes.
class OutputSet {
public:
  explicit OutputSet(bool holdStandardOutput = false);
  ~OutputSet();
  OutputSet(const OutputSet &) = delete;
  OutputSet &operator=(const OutputSet &) = delete;

  /// Throws Error(CannotWrite) when an output cannot be put in place; the
  /// outputs renamed before it stay (each is complete).
  void commit();

  struct State;

private:
  std::unique_ptr<State> state_;
  State *outer_;
};

/// While one lives, outputs of this thread are put in place as they are
/// written even though an OutputSet is open: for work directories a later
/// step reads at once (the bundle that --verify-link links), never for a
/// command's own outputs.
class ImmediateOutputs {
public:
  ImmediateOutputs();
  ~ImmediateOutputs();
  ImmediateOutputs(const ImmediateOutputs &) = delete;
  ImmediateOutputs &operator=(const ImmediateOutputs &) = delete;

private:
  OutputSet::State *suspended_;
};

/// A directory output. The constructor checks `dir` (missing, or a directory
/// that is not a symbolic link) and creates a fresh staging directory beside
/// it, whose path() the caller fills; publish() puts it in place (now, or when
/// the open OutputSet commits): `dir` then holds the staged entries plus the
/// old entries they do not replace. An old entry of the same name is replaced
/// only by one of its kind (a file by a file, a directory by a directory); a
/// symbolic link, FIFO or device in its place is refused. Publishes into one
/// parent directory take turns (a lock), and staging directories that killed
/// runs left there are removed. Errors are Error(CannotWrite) "<dir>: cannot
/// write <what>: ...".
class OutputDirectory {
public:
  OutputDirectory(const std::string &dir, const std::string &what);
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory &) = delete;
  OutputDirectory &operator=(const OutputDirectory &) = delete;

  /// The staging directory to write into (absolute).
  const std::string &path() const;
  /// Writes one file of the new contents into path(), refusing a name with
  /// a '/' or that is "." or "..".
  void writeFile(const std::string &name, const std::string &bytes);
  void publish();

  struct State;

private:
  std::shared_ptr<State> state_;
};

/// Checks that `dir` can hold outputs: it is a directory (not a symbolic
/// link), or it can be created (its nearest existing ancestor is writable).
/// Throws Error(CannotWrite) naming `dir` and, in the message, `what`
/// ("bundle directory"). Creates nothing, so a command that fails later
/// leaves no empty directory; called before the long work, so a typo fails at
/// once.
void checkDirectoryCreatable(const std::string &dir, const std::string &what);

/// Flushes stdout; throws Error(CannotWrite) if anything written to it was
/// lost (`bundlefit plan m.onnx > /dev/full`).
void flushStandardOutput();

} // namespace bundlefit
