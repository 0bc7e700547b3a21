//===- OnnxImporter.h - ONNX model files to the bundlefit graph IR ---------===//
//
// The importer is the only component that sees protobuf/ONNX types. It reads
// an ONNX ModelProto (opsets 1..21 of the default domain), builds an honest
// Graph in the opset-13 operand form described in Graph.h, and rejects, in
// one error, every operator the OpRegistry does not know. It runs no shape
// inference and no folding: graph inputs and constants have types, node
// outputs do not (the pipeline calls inferGraphTypes and the passes next).
//
// The opset rewrites and the attribute conventions the importer adds are
// listed at the top of src/onnx/OnnxImporter.cpp.
//
// Failures throw bundlefit::Error, one line naming the file, node, input or
// option at fault:
//   BadInputFile  missing/unreadable file, not an ONNX model, truncated,
//                 external data, a node reading an undefined value.
//   Unsupported   unsupported operators (all listed at once), opset outside
//                 1..21, undefined dimension symbols, unsupported dtypes.
//   Usage         malformed --model-input / --define-symbol text, or an
//                 override naming no input of the model.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"
#include "bundlefit/ir/TensorType.h"
#include "bundlefit/support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bundlefit {

/// `--model-input name,type,[d0,d1,...]`: replaces the type and shape the
/// model declares for graph input `name`. Glow's quantized spelling
/// `name,int8q,scale,offset,[shape]` fills `quant` (one scale/zero point).
struct ModelInputOverride {
  std::string name;
  DType dtype = DType::Float32;
  Shape shape;
  QuantParams quant;
  /// false: "name,int8q,scale,offset" without a shape (the model's stays).
  bool shapeGiven = true;
};

struct ImportOptions {
  /// Values for symbolic input dimensions (ONNX dim_param), from
  /// `--define-symbol name=value`.
  std::map<std::string, int64_t> symbols;
  std::vector<ModelInputOverride> inputOverrides;
  /// Throw UnsupportedOperatorsError listing every operator OpRegistry does
  /// not know. Tools that only inspect a model (and the importer's own tests)
  /// can turn it off; such nodes are then left in the graph as they are
  /// (non-default domains spelled "<domain>.<OpType>").
  bool rejectUnsupportedOps = true;
};

/// Reads the ONNX model at `path` (up to 2 GB) into a Graph named after the
/// ONNX graph (or the file stem when the graph has no name).
std::unique_ptr<Graph> importOnnxModel(const std::string &path, const ImportOptions &options = {});

/// Error(Unsupported) for a model with operators bundlefit has no definition
/// of: also names them, so a caller that groups models by operator (the ONNX
/// conformance harness's skip table) need not parse the message.
class UnsupportedOperatorsError : public Error {
public:
  UnsupportedOperatorsError(std::vector<std::string> ops, const std::string &message)
      : Error(ExitCode::Unsupported, message), ops_(std::move(ops)) {}
  /// The operator types, sorted, each once.
  const std::vector<std::string> &ops() const { return ops_; }

private:
  std::vector<std::string> ops_;
};

/// The importer's check, for a graph imported with rejectUnsupportedOps
/// false and then rewritten: an UnsupportedOperatorsError naming `path` and every operator
/// OpRegistry does not know, with its nodes.
void rejectUnsupportedOps(const Graph &graph, const std::string &path);

/// Whether the main graph of the ONNX model at `path` has a node of one of
/// `opTypes` (default domain). False for a file that is not a readable
/// model: importOnnxModel reports that.
bool onnxModelHasOps(const std::string &path, const std::vector<std::string> &opTypes);

/// Parses the text of `--model-input` (Glow: `-model-input`):
///   "name,type,[d0,d1,...]"            type: float|float32|int8|uint8|
///                                        int32|int64|bool, or Glow's
///                                        int32i|int64i
///   "name,int8q,scale,offset,[shape]"  also uint8q; the shape may be left
///                                        out (shapeGiven false)
/// Throws Error(Usage) naming the option.
ModelInputOverride parseModelInputOption(const std::string &text);

/// Parses the text of `--define-symbol` "name=value" or Glow's
/// `-onnx-define-symbol` "name,value" (value a positive integer).
/// Throws Error(Usage) naming the option.
std::pair<std::string, int64_t> parseDefineSymbolOption(const std::string &text);

/// Reads one serialized ONNX TensorProto (the backend test data's
/// test_data_set_*/input_0.pb, output_0.pb). float16/bfloat16/double data
/// become float32. If `name` is given it receives the tensor's name (may be
/// empty). Throws Error(BadInputFile) naming the file.
Tensor loadTensorProtoFile(const std::string &path, std::string *name = nullptr);

} // namespace bundlefit
