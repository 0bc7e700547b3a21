//===- ModelSource.cpp - A model for the Python module: a path or bytes ----===//
#include "ModelSource.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/TemporaryDirectory.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace bundlefit::python {

namespace fs = std::filesystem;

ModelSource ModelSource::fromPath(const std::string &path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw Error(ExitCode::BadInputFile, path + ": cannot read model file (no such file)");
  ModelSource source;
  source.path_ = source.label_ = path;
  return source;
}

ModelSource ModelSource::fromBytes(const std::string &bytes, const std::string &name) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw Error(ExitCode::Usage,
                "name '" + name + "': a file name without directories, e.g. model.onnx");
  // Named for this process, so that one killed with its models' files still
  // there has them removed by the next (support/TemporaryDirectory.h).
  removeLeftoverTemporaryDirectories();
  std::error_code ec;
  std::string pattern =
      (fs::temp_directory_path(ec) / ("bundlefit-py-" + std::to_string(::getpid()) + "-XXXXXX"))
          .string();
  if (!::mkdtemp(pattern.data()))
    throw Error(ExitCode::CannotWrite,
                pattern + ": cannot create a temporary directory for the model bytes");
  ModelSource source;
  source.temporaryDir_ = pattern;
  source.path_ = (fs::path(pattern) / name).string();
  source.label_ = name;
  std::ofstream out(source.path_, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out.flush())
    throw Error(ExitCode::CannotWrite, source.path_ + ": cannot write the model bytes");
  return source;
}

ModelSource::ModelSource(ModelSource &&other) noexcept
    : path_(std::move(other.path_)), label_(std::move(other.label_)),
      temporaryDir_(std::move(other.temporaryDir_)) {
  other.temporaryDir_.clear();
}

ModelSource::~ModelSource() {
  if (temporaryDir_.empty())
    return;
  std::error_code ignored;
  fs::remove_all(temporaryDir_, ignored);
}

} // namespace bundlefit::python
