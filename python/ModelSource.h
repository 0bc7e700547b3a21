//===- ModelSource.h - A model for the Python module: a path or bytes ------===//
//
// The driver reads models from files (and names them by path and SHA-256 in
// reports). A model given as bytes (an in-memory
// `onnx.ModelProto.SerializeToString()`) is written once to a private
// temporary directory, as `name`, and removed when the Model object goes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace bundlefit::python {

class ModelSource {
public:
  /// A model file; Error(BadInputFile) when it cannot be read.
  static ModelSource fromPath(const std::string &path);
  /// Model bytes, saved as `name` (a file name, no directories).
  static ModelSource fromBytes(const std::string &bytes, const std::string &name);

  ModelSource(ModelSource &&other) noexcept;
  ModelSource &operator=(ModelSource &&) = delete;
  ModelSource(const ModelSource &) = delete;
  ~ModelSource();

  /// The file the driver reads.
  const std::string &path() const { return path_; }
  /// What reports call the model: the path, or `name` for bytes.
  const std::string &label() const { return label_; }

private:
  ModelSource() = default;
  std::string path_, label_;
  std::string temporaryDir_; ///< Removed with the object; empty for a path.
};

} // namespace bundlefit::python
