//===- OnnxImporter.cpp - ONNX ModelProto to the bundlefit graph IR --------===//
//
// What the importer guarantees to the rest of the pipeline
// ---------------------------------------------------------
// * Values keep their ONNX names (graph outputs always do; values the
//   importer creates get fresh names that no ONNX value uses).
// * Graph inputs and constants have types; node outputs do not (no shape
//   inference or folding here).
// * Initializers, and graph inputs that are also initializers (IR < 4), are
//   constants. Constant nodes (value, value_float(s), value_int(s)) become
//   constants named after their output, not nodes.
// * Data types: float32, int8, uint8, int32, int64, bool as they are;
//   float16, bfloat16 and double constants become float32. Other types
//   (strings, uint16...) are Error(Unsupported) naming the tensor. Graph
//   inputs of type float16/double must be overridden with --model-input.
// * Omitted optional operands ("" in ONNX) are nullptr; trailing omitted
//   operands are dropped, so Clip(x, "", "") reads as Clip(x).
// * Node names: the ONNX name, or "<OpType>_<index in the ONNX graph>" when
//   empty (the Graph makes them unique).
// * Every graph output is a node output: an output that is directly a graph
//   input or a constant gets an Identity node (a constant is renamed
//   "<name>_value" so the output keeps the ONNX name).
// * Nodes are added in topological order (ONNX requires it; exporters that
//   break the rule are tolerated).
// * Nodes of other domains (com.microsoft, ai.onnx.ml...) get op type
//   "<domain>.<OpType>" and are always reported unsupported.
// * Unsupported operators are reported together in one Error(Unsupported):
//   "m.onnx: 3 unsupported operators: LSTM (node 'l1'), NonMaxSuppression
//   (nodes 'nms', 'nms_2')".
//
// Attribute conventions bundlefit adds (see also OpRegistry.h)
// -----------------------------------------------------------
//   ConstantOfShape  value (float), value_dtype (int): the TENSOR attribute
//                    `value` becomes its single element as a float plus the
//                    element type as static_cast<int>(DType); both are always
//                    set (default 0.0f, DType::Float32 as in ONNX). Integer
//                    fill values beyond float's exact range (2^24) are
//                    rejected.
//   Softmax, LogSoftmax, Hardmax  axis always explicit; coerce_to_2d=1 for
//                    opset < 13 models.
//   Resize           coordinate_transformation_mode / nearest_mode set
//                    explicitly when they come from Upsample or Resize-10.
//   Cast             `to` stays the ONNX TensorProto data type number.
//   Other TENSOR, GRAPH or SPARSE_TENSOR attributes are not representable;
//   on a registered operator they are an Error(Unsupported).
//
// Opset rewrites into the opset-13 operand form (OpsetNormalization.cpp)
// ----------------------------------------------------------------------
// Models of default-domain opset 1..21 are accepted. What opsets 18-21
// changed in operators bundlefit runs: Reduce* axes as operand 1 (18; made an
// attribute below), Pad's axes operand (18) and mode "wrap" (19), Split's
// num_outputs (18) and AveragePool's dilations (19) are computed by the
// operators themselves; Resize's axes (18)
// are expanded to every dimension by the constant-folding sweep
// (passes/FoldConstants.cpp); Resize's antialias=1 and
// keep_aspect_ratio_policy (18), half_pixel_symmetric (19) and
// ScatterElements' reduction max/min (18) are refused by the operator,
// naming the attribute. Gelu (20) is a float math op with an int8 table;
// Col2Im (18) runs in float (ops/movement/Col2Im.cpp). Newer operators
// (GroupNormalization, CenterCropPad, DFT...) are reported as unsupported operators. Opset 22 and
// newer are refused: their changes are not reviewed.
//   Clip < 11             attributes min/max -> float32 scalar operands 1, 2
//   Squeeze/Unsqueeze < 13  attribute axes -> int64 operand 1
//   Split < 13            attribute split -> int64 operand 1
//   Pad < 11              attributes pads, value -> int64 operand 1, float32
//                         scalar operand 2 (mode stays an attribute)
//   Slice < 10            attributes starts/ends/axes -> int64 operands 1-3
//   Upsample (1, 7, 9, 10)  -> Resize(X, <omitted roi>, scales), mode
//                         ("bilinear" -> "linear"),
//                         coordinate_transformation_mode="asymmetric",
//                         nearest_mode="floor"
//   Resize 10             (X, scales) -> (X, <omitted>, scales), same two
//                         attributes as Upsample
//   Resize 11/12          empty constant roi/scales -> omitted
//   Softmax family        see above
//   Dropout               only operand 0; ratio/is_test/seed attributes
//                         dropped; mask output dropped when unused (used:
//                         Error(Unsupported)); operand training_mode must
//                         be a constant false (or ratio a constant 0)
//   PRelu < 7             a 1-D slope of size C = X.shape[1] is per channel:
//                         reshaped to [C,1,...,1] (numpy-broadcastable)
//   BatchNormalization    spatial=1, is_test, consumed_inputs,
//                         training_mode=0 dropped; spatial=0 or
//                         training_mode=1 rejected; statistics outputs
//                         dropped when unused
//   MaxPool               unused Indices output dropped
//   ReduceSum >= 13,      constant axes operand -> attribute axes (Reduce ops
//   Reduce* >= 18         keep axes/keepdims attributes, as before opset 18)
//   Cast >= 19            saturate dropped (float8 only)
//   Q/DequantizeLinear    saturate dropped; block_size != 0 rejected;
//     >= 19               QuantizeLinear-21 output_dtype (int8/uint8) with no
//                         zero point -> a zero zero point of that type
//   opset 6 broadcast     attribute broadcast dropped; `axis` resolved when
//                         ranks are known at import (else Unsupported)
//   opset < 6             consumed_inputs dropped everywhere; Reshape < 5
//                         attribute shape -> int64 operand 1; Concat < 4
//                         axis made explicit (default 1); Pad-1 paddings ->
//                         pads; Cast < 6 string `to` -> TensorProto number;
//                         Tile-1 rejected
//
//===----------------------------------------------------------------------===//

#include "bundlefit/onnx/OnnxImporter.h"

#include "OnnxTensors.h"
#include "OpsetNormalization.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <queue>
#include <set>

namespace bundlefit {

using namespace onnximport;

namespace {

constexpr int64_t kOldestOpset = 1;
constexpr int64_t kNewestOpset = 21;

/// Whether any node of `graph` is of the default ONNX domain.
bool usesDefaultDomain(const onnx::GraphProto &graph) {
  for (const onnx::NodeProto &node : graph.node())
    if (node.domain().empty() || node.domain() == "ai.onnx")
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Reading files
//===----------------------------------------------------------------------===//

/// Whether a graph input's shape names a symbol (--define-symbol sets it).
bool usesSymbol(const onnx::ValueInfoProto &input) {
  const auto &dims = input.type().tensor_type().shape().dim();
  return std::any_of(dims.begin(), dims.end(),
                     [](const auto &dim) { return !dim.dim_param().empty(); });
}

Error badFile(const std::string &path, const std::string &problem) {
  return Error(ExitCode::BadInputFile, path + ": " + problem);
}

/// Names a well-known non-ONNX format from the first bytes, or "".
std::string recognizeOtherFormat(const char *head, size_t size) {
  auto startsWith = [&](const char *magic, size_t offset = 0) {
    size_t length = std::strlen(magic);
    return size >= offset + length && std::memcmp(head + offset, magic, length) == 0;
  };
  if (startsWith("TFL3", 4))
    return "a TensorFlow Lite model";
  if (startsWith("\x89HDF"))
    return "an HDF5 file (Keras?)";
  if (startsWith("PK\x03\x04"))
    return "a zip archive (a PyTorch .pt file?)";
  if (startsWith("ir_version") || startsWith("graph {"))
    return "an ONNX model in protobuf text format";
  return "";
}

/// Opens `path` and parses it as protobuf message `message` (up to 2 GB).
/// `kind` says what the file should be, for the error messages.
void parseProtobufFile(const std::string &path, google::protobuf::Message &message,
                       const std::string &kind) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    throw badFile(path, "no such file");
  if (std::filesystem::is_directory(path, error))
    throw badFile(path, "is a directory, not " + kind);
  // A regular file of a known length: a link to /dev/zero or a FIFO would
  // be read forever.
  checkInputFile(path, kind.substr(kind.find(' ') + 1));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw badFile(path, std::string("cannot open: ") + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0);
  if (size == 0)
    throw badFile(path, "is empty, not " + kind);
  if (size > std::streamoff(INT_MAX))
    throw badFile(path, "is larger than 2 GB, the protobuf limit; store it with "
                        "external data (which bundlefit does not read yet)");
  char head[16] = {};
  in.read(head, sizeof(head));
  const size_t headSize = size_t(in.gcount());
  in.clear();
  in.seekg(0);
  std::string other = recognizeOtherFormat(head, headSize);
  if (!other.empty())
    throw badFile(path, "is " + other + ", not " + kind);

  google::protobuf::io::IstreamInputStream stream(&in);
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!message.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw badFile(path, "is not " + kind +
                            " (protobuf parsing failed: the file is "
                            "truncated or in another format)");
}

onnx::ModelProto readModelProto(const std::string &path) {
  onnx::ModelProto model;
  parseProtobufFile(path, model, "an ONNX model");
  if (!model.has_graph() || model.ir_version() <= 0)
    throw badFile(path, "is not an ONNX model (no ir_version or graph; truncated or "
                        "another format)");
  if (model.graph().output_size() == 0)
    throw badFile(path, "the ONNX graph has no outputs (truncated file?)");
  return model;
}

/// The first tensor in the graph (recursively) that keeps its data in an
/// external file, described for an error message, or "".
std::string findExternalTensor(const onnx::GraphProto &graph) {
  for (const onnx::TensorProto &tensor : graph.initializer())
    if (hasExternalData(tensor))
      return "initializer '" + tensor.name() + "'";
  for (const onnx::NodeProto &node : graph.node()) {
    for (const onnx::AttributeProto &attr : node.attribute()) {
      bool external = attr.has_t() && hasExternalData(attr.t());
      for (const onnx::TensorProto &tensor : attr.tensors())
        external = external || hasExternalData(tensor);
      if (external)
        return "attribute '" + attr.name() + "' of node '" + node.name() + "' (" + node.op_type() +
               ")";
      if (attr.has_g()) {
        std::string found = findExternalTensor(attr.g());
        if (!found.empty())
          return found;
      }
      for (const onnx::GraphProto &subgraph : attr.graphs()) {
        std::string found = findExternalTensor(subgraph);
        if (!found.empty())
          return found;
      }
    }
  }
  return "";
}

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

class ModelImporter {
public:
  ModelImporter(const std::string &path, const ImportOptions &options)
      : path_(path), options_(options) {}

  std::unique_ptr<Graph> run();

private:
  Error bad(const std::string &problem) const { return badFile(path_, problem); }
  Error unsupported(const std::string &problem) const {
    return Error(ExitCode::Unsupported, path_ + ": " + problem);
  }

  void readOpset(const onnx::ModelProto &model);
  void collectNames(const onnx::GraphProto &graph);
  void importInitializers(onnx::GraphProto &graph);
  void importInputs(const onnx::GraphProto &graph);
  TensorType inputType(const onnx::ValueInfoProto &input) const;
  std::vector<int> topologicalOrder(const onnx::GraphProto &graph) const;
  void importNode(const onnx::NodeProto &proto, int index);
  void importConstantNode(const onnx::NodeProto &proto, const std::string &name);
  Attributes convertAttributes(const onnx::NodeProto &proto, const std::string &name,
                               bool foreign) const;
  void importOutputs(const onnx::GraphProto &graph);
  void rejectUnsupportedOps() const;

  std::string freshValueName(const std::string &base) const;
  void defineValue(const std::string &onnxName, Value *value);

  std::string path_;
  const ImportOptions &options_;
  std::unique_ptr<Graph> graph_;
  int64_t opset_ = 0;
  /// ONNX value name -> value (the Graph may rename on collisions).
  std::map<std::string, Value *> values_;
  /// Every value name the ONNX graph mentions, so created values avoid them.
  std::set<std::string> onnxNames_;
  /// Value names read by some node or listed as graph outputs.
  std::set<std::string> usedNames_;
  /// Nodes of non-default domains, with their domain.
  std::vector<std::pair<const Node *, std::string>> foreignNodes_;
};

std::unique_ptr<Graph> ModelImporter::run() {
  onnx::ModelProto model = readModelProto(path_);
  const onnx::GraphProto &graph = model.graph();
  std::string external = findExternalTensor(graph);
  if (!external.empty())
    throw bad(external + " keeps its data in an external file; bundlefit reads "
                         "self-contained models only (save the model without external data)");
  if (graph.sparse_initializer_size() > 0)
    throw unsupported("sparse initializer '" + graph.sparse_initializer(0).values().name() +
                      "' is not supported");
  readOpset(model);

  graph_ = std::make_unique<Graph>();
  graph_->name = graph.name().empty() ? std::filesystem::path(path_).stem().string() : graph.name();
  collectNames(graph);
  importInitializers(*model.mutable_graph());
  importInputs(graph);
  for (int index : topologicalOrder(graph))
    importNode(graph.node(index), index);
  importOutputs(graph);
  if (options_.rejectUnsupportedOps)
    rejectUnsupportedOps();
  return std::move(graph_);
}

void ModelImporter::readOpset(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      opset_ = opset.version();
  if (opset_ == 0 && !usesDefaultDomain(model.graph())) {
    // Only other-domain operators (e.g. ai.onnx.preview.training): the
    // opset is irrelevant; they are reported as unsupported operators.
    opset_ = kNewestOpset;
    return;
  }
  if (opset_ == 0)
    throw bad("the model imports no ONNX operator set (IR version " +
              std::to_string(model.ir_version()) + "); re-export it with opset " +
              std::to_string(kOldestOpset) + ".." + std::to_string(kNewestOpset));
  if (opset_ > kNewestOpset)
    throw unsupported("the model uses ONNX opset " + std::to_string(opset_) +
                      "; bundlefit imports opsets " + std::to_string(kOldestOpset) + ".." +
                      std::to_string(kNewestOpset) + ": the operator changes of opset " +
                      std::to_string(kNewestOpset + 1) +
                      " and newer are not implemented (re-export with opset_version=" +
                      std::to_string(kNewestOpset) + ")");
  if (opset_ < kOldestOpset)
    throw unsupported("the model uses ONNX opset " + std::to_string(opset_) +
                      "; bundlefit imports opsets " + std::to_string(kOldestOpset) + ".." +
                      std::to_string(kNewestOpset) +
                      " (re-export with opset_version=" + std::to_string(kNewestOpset) + ")");
}

void ModelImporter::collectNames(const onnx::GraphProto &graph) {
  for (const auto &tensor : graph.initializer())
    onnxNames_.insert(tensor.name());
  for (const auto &input : graph.input())
    onnxNames_.insert(input.name());
  for (const auto &node : graph.node()) {
    onnxNames_.insert(node.output().begin(), node.output().end());
    usedNames_.insert(node.input().begin(), node.input().end());
  }
  for (const auto &output : graph.output()) {
    onnxNames_.insert(output.name());
    usedNames_.insert(output.name());
  }
}

std::string ModelImporter::freshValueName(const std::string &base) const {
  auto taken = [&](const std::string &name) {
    return onnxNames_.count(name) || graph_->findValue(name);
  };
  if (!taken(base))
    return base;
  for (int suffix = 1;; ++suffix) {
    std::string candidate = base + "_" + std::to_string(suffix);
    if (!taken(candidate))
      return candidate;
  }
}

void ModelImporter::defineValue(const std::string &onnxName, Value *value) {
  if (!values_.emplace(onnxName, value).second)
    throw bad("value '" + onnxName + "' is defined twice");
}

void ModelImporter::importInitializers(onnx::GraphProto &graph) {
  for (onnx::TensorProto &tensor : *graph.mutable_initializer()) {
    DecodedTensor decoded = decodeTensor(tensor, path_ + ": initializer '" + tensor.name() + "'");
    defineValue(tensor.name(),
                graph_->addConstant(tensor.name(), decoded.type, std::move(decoded.bytes)));
    // The weights now live in the graph: free the protobuf copy so a large
    // model is held once, not twice.
    tensor.clear_raw_data();
    tensor.clear_float_data();
    tensor.clear_int32_data();
    tensor.clear_int64_data();
    tensor.clear_double_data();
  }
}

TensorType ModelImporter::inputType(const onnx::ValueInfoProto &input) const {
  const std::string quoted = "input '" + input.name() + "'";
  const std::string overrideHint =
      "; give its type and shape with --model-input " + input.name() + ",float,[d0,d1,...]";
  if (!input.type().has_tensor_type())
    throw unsupported(quoted + " is not a tensor (a sequence, map or optional)");
  const onnx::TypeProto_Tensor &tensorType = input.type().tensor_type();
  TensorType type;
  bool converted = false;
  if (!dtypeFromOnnx(tensorType.elem_type(), type.dtype, &converted) || converted)
    throw unsupported(quoted + " has element type " + onnxTypeName(tensorType.elem_type()) +
                      ", which bundlefit does not compute in" + overrideHint);
  if (!tensorType.has_shape())
    throw unsupported(quoted + " has no shape in the model" + overrideHint);
  const auto &dims = tensorType.shape().dim();
  for (int i = 0; i < dims.size(); ++i) {
    const onnx::TensorShapeProto_Dimension &dim = dims[i];
    const std::string which = quoted + " dimension " + std::to_string(i);
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      type.shape.push_back(dim.dim_value());
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      auto it = options_.symbols.find(dim.dim_param());
      if (it == options_.symbols.end())
        throw unsupported(which + " is the undefined symbol '" + dim.dim_param() +
                          "'; set it with --define-symbol " + dim.dim_param() + "=<value>");
      type.shape.push_back(it->second);
    } else {
      throw unsupported(which + " has no size" + overrideHint);
    }
  }
  return type;
}

void ModelImporter::importInputs(const onnx::GraphProto &graph) {
  std::set<std::string> overridden;
  std::vector<std::string> inputNames;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (values_.count(input.name()))
      continue; // An initializer listed as input (IR < 4): a constant.
    inputNames.push_back(input.name());
    auto match = std::find_if(options_.inputOverrides.begin(), options_.inputOverrides.end(),
                              [&](const ModelInputOverride &o) { return o.name == input.name(); });
    TensorType type;
    if (match != options_.inputOverrides.end()) {
      type.dtype = match->dtype;
      type.shape = match->shape;
      type.quant = match->quant;
      overridden.insert(match->name);
    } else {
      type = inputType(input);
    }
    if (!checkedTensorBytes(type.shape, dtypeSize(type.dtype))) {
      const std::string problem = "input '" + input.name() + "' of type " + type.str() +
                                  " is larger than bundlefit's limit of " +
                                  std::to_string(kMaxTensorBytes >> 30) + " GiB per tensor";
      if (match != options_.inputOverrides.end())
        throw Error(ExitCode::Usage,
                    "--model-input '" + match->name + "': " + path_ + ": " + problem);
      throw bad(problem + (usesSymbol(input) ? " (check --define-symbol)" : ""));
    }
    defineValue(input.name(), graph_->addInput(input.name(), type));
  }
  for (const ModelInputOverride &entry : options_.inputOverrides) {
    if (overridden.count(entry.name))
      continue;
    std::string list;
    for (const std::string &name : inputNames)
      list += (list.empty() ? "" : ", ") + ("'" + name + "'");
    throw Error(ExitCode::Usage, "--model-input '" + entry.name + "': " + path_ +
                                     " has no input named '" + entry.name +
                                     "' (its inputs: " + (list.empty() ? "none" : list) + ")");
  }
}

/// Node indices in a topological order, the file order wherever it is valid.
std::vector<int> ModelImporter::topologicalOrder(const onnx::GraphProto &graph) const {
  const int count = graph.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < count; ++i)
    for (const std::string &output : graph.node(i).output())
      if (!output.empty())
        producer.emplace(output, i);
  std::vector<int> pending(count, 0);
  std::vector<std::vector<int>> readers(count);
  for (int i = 0; i < count; ++i)
    for (const std::string &input : graph.node(i).input()) {
      auto it = producer.find(input);
      if (it == producer.end() || values_.count(input))
        continue;
      ++pending[i];
      readers[it->second].push_back(i);
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < count; ++i)
    if (pending[i] == 0)
      ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int node = ready.top();
    ready.pop();
    order.push_back(node);
    for (int reader : readers[node])
      if (--pending[reader] == 0)
        ready.push(reader);
  }
  if (int(order.size()) != count) {
    for (int i = 0; i < count; ++i)
      if (pending[i] > 0)
        throw bad("the graph has a cycle through node '" + graph.node(i).name() + "' (" +
                  graph.node(i).op_type() + ")");
  }
  return order;
}

Attributes ModelImporter::convertAttributes(const onnx::NodeProto &proto, const std::string &name,
                                            bool foreign) const {
  using onnx::AttributeProto;
  Attributes attrs;
  const std::string &op = proto.op_type();
  const bool registered = !foreign && OpRegistry::get().find(op);
  for (const AttributeProto &attr : proto.attribute()) {
    AttributeProto::AttributeType kind = attr.type();
    if (kind == AttributeProto::UNDEFINED) { // IR 1 files carry no type.
      if (attr.has_f())
        kind = AttributeProto::FLOAT;
      else if (attr.has_i())
        kind = AttributeProto::INT;
      else if (attr.has_s())
        kind = AttributeProto::STRING;
      else if (attr.has_t())
        kind = AttributeProto::TENSOR;
      else if (attr.floats_size())
        kind = AttributeProto::FLOATS;
      else if (attr.ints_size())
        kind = AttributeProto::INTS;
      else if (attr.strings_size())
        kind = AttributeProto::STRINGS;
    }
    switch (kind) {
    case AttributeProto::FLOAT:
      attrs.setFloat(attr.name(), attr.f());
      break;
    case AttributeProto::INT:
      attrs.setInt(attr.name(), attr.i());
      break;
    case AttributeProto::STRING:
      attrs.setString(attr.name(), attr.s());
      break;
    case AttributeProto::FLOATS:
      attrs.setFloats(attr.name(), {attr.floats().begin(), attr.floats().end()});
      break;
    case AttributeProto::INTS:
      attrs.setInts(attr.name(), {attr.ints().begin(), attr.ints().end()});
      break;
    case AttributeProto::STRINGS: {
      Attribute value;
      value.kind = Attribute::Kind::Strings;
      value.strings.assign(attr.strings().begin(), attr.strings().end());
      attrs.set(attr.name(), value);
      break;
    }
    case AttributeProto::TENSOR:
      if (!foreign && opFromName(op) == Op::ConstantOfShape && attr.name() == "value") {
        const std::string what =
            path_ + ": node '" + name + "' (ConstantOfShape) attribute 'value'";
        DecodedTensor decoded = decodeTensor(attr.t(), what);
        if (decoded.type.numElements() != 1)
          throw bad(what + " must hold one element");
        Value scratch;
        scratch.type = decoded.type;
        scratch.data = decoded.bytes;
        const double fill = scratch.elementAsDouble(0);
        if (double(float(fill)) != fill)
          throw unsupported("node '" + name + "' (ConstantOfShape): fill value " +
                            std::to_string(fill) + " is not exactly representable");
        attrs.setFloat("value", float(fill));
        attrs.setInt("value_dtype", int(decoded.type.dtype));
        break;
      }
      [[fallthrough]];
    default:
      if (registered)
        throw unsupported("node '" + name + "' (" + op + "): attribute '" + attr.name() +
                          "' is a tensor/graph, which bundlefit does not support there");
      break; // The node is reported unsupported anyway.
    }
  }
  if (!foreign && opFromName(op) == Op::ConstantOfShape && !attrs.has("value")) {
    attrs.setFloat("value", 0.0f);
    attrs.setInt("value_dtype", int(DType::Float32));
  }
  return attrs;
}

void ModelImporter::importConstantNode(const onnx::NodeProto &proto, const std::string &name) {
  if (proto.output_size() != 1 || proto.attribute_size() != 1)
    throw bad("node '" + name + "' (Constant) needs one output and one attribute");
  const onnx::AttributeProto &attr = proto.attribute(0);
  const std::string &attrName = attr.name();
  DecodedTensor decoded;
  if (attrName == "value") {
    decoded = decodeTensor(attr.t(), path_ + ": node '" + name + "' (Constant)");
  } else if (attrName == "value_float" || attrName == "value_floats") {
    std::vector<float> values =
        attrName == "value_float" ? std::vector<float>{attr.f()}
                                  : std::vector<float>(attr.floats().begin(), attr.floats().end());
    decoded.type = {DType::Float32, {}, {}};
    if (attrName == "value_floats")
      decoded.type.shape = {int64_t(values.size())};
    decoded.bytes.resize(values.size() * sizeof(float));
    if (!values.empty())
      copyBytes(decoded.bytes.data(), values.data(), decoded.bytes.size());
  } else if (attrName == "value_int" || attrName == "value_ints") {
    std::vector<int64_t> values =
        attrName == "value_int" ? std::vector<int64_t>{attr.i()}
                                : std::vector<int64_t>(attr.ints().begin(), attr.ints().end());
    decoded.type = {DType::Int64, {}, {}};
    if (attrName == "value_ints")
      decoded.type.shape = {int64_t(values.size())};
    decoded.bytes.resize(values.size() * sizeof(int64_t));
    if (!values.empty())
      copyBytes(decoded.bytes.data(), values.data(), decoded.bytes.size());
  } else {
    throw unsupported("node '" + name + "' (Constant): attribute '" + attrName +
                      "' (string or sparse constants) is not supported");
  }
  const std::string &output = proto.output(0);
  defineValue(output, graph_->addConstant(output, decoded.type, std::move(decoded.bytes)));
}

void ModelImporter::importNode(const onnx::NodeProto &proto, int index) {
  const std::string &domain = proto.domain();
  const bool foreign = !(domain.empty() || domain == "ai.onnx");
  const std::string name =
      proto.name().empty() ? proto.op_type() + "_" + std::to_string(index) : proto.name();
  if (!foreign && proto.op_type() == "Constant") {
    importConstantNode(proto, name);
    return;
  }

  NodeDraft draft;
  draft.opType = foreign ? domain + "." + proto.op_type() : proto.op_type();
  draft.name = name;
  for (const std::string &input : proto.input()) {
    if (input.empty()) {
      draft.inputs.push_back(nullptr);
      continue;
    }
    auto it = values_.find(input);
    if (it == values_.end())
      throw bad(draft.describe() + " reads '" + input +
                "', which no node, graph input or initializer defines");
    draft.inputs.push_back(it->second);
  }
  trimOmittedInputs(draft.inputs);
  draft.attrs = convertAttributes(proto, name, foreign);
  draft.outputs.assign(proto.output().begin(), proto.output().end());

  if (!foreign) {
    NormalizeContext context{
        *graph_, opset_, path_,
        [this](const std::string &value) { return usedNames_.count(value) != 0; },
        [this](const std::string &base) { return freshValueName(base); }};
    normalizeNode(draft, context);
  }

  Node *node = graph_->addNode(draft.opType, draft.name, draft.inputs, draft.outputs);
  node->attrs = std::move(draft.attrs);
  if (foreign)
    foreignNodes_.emplace_back(node, domain);
  for (size_t i = 0; i < draft.outputs.size(); ++i)
    if (!draft.outputs[i].empty())
      defineValue(draft.outputs[i], node->outputs[i]);
}

void ModelImporter::importOutputs(const onnx::GraphProto &graph) {
  for (const onnx::ValueInfoProto &output : graph.output()) {
    const std::string &name = output.name();
    auto it = values_.find(name);
    if (it == values_.end())
      throw bad("graph output '" + name + "' is computed by no node");
    Value *value = it->second;
    if (value->isConstant() || value->isGraphInput()) {
      // Every output is a node output (a placeholder the bundle writes).
      std::string outputName = name;
      if (value->isConstant())
        graph_->renameValue(value, freshValueName(name + "_value"));
      else
        outputName = freshValueName(name + "_output");
      Node *identity = graph_->addNode(Op::Identity, "Identity_" + name, {value}, {outputName});
      value = identity->output(0);
    }
    graph_->markOutput(value);
  }
}

namespace {
/// Op types the graph passes create (fusions, patch stages, int8 lowering).
/// They carry state no model file can give (a patch body, quantization
/// parameters), so a node of that type in a model is an unsupported operator,
/// not a shortcut into the passes' invariants.
bool isInternalOp(const std::string &opType) {
  switch (opFromName(opType)) {
  case Op::ConvPool:
  case Op::PatchStage:
  case Op::Quantize:
  case Op::Dequantize:
  case Op::Rescale:
  case Op::CmsisLayout:
    return true;
  default:
    return false;
  }
}
} // namespace

void ModelImporter::rejectUnsupportedOps() const {
  bundlefit::rejectUnsupportedOps(*graph_, path_);
}

} // namespace

void rejectUnsupportedOps(const Graph &graph, const std::string &path) {
  std::map<std::string, std::vector<std::string>> missing; // op -> node names
  size_t count = 0;
  for (const Node *node : graph.nodes()) {
    // Other domains' op types are "<domain>.<OpType>": never registered.
    if (!isInternalOp(node->opType) && OpRegistry::get().find(node->opType))
      continue;
    missing[node->opType].push_back(node->name);
    ++count;
  }
  if (missing.empty())
    return;
  constexpr size_t kNamesShown = 4;
  std::string list;
  for (const auto &[op, nodes] : missing) {
    std::string names;
    for (size_t i = 0; i < nodes.size() && i < kNamesShown; ++i)
      names += (i ? ", '" : "'") + nodes[i] + "'";
    if (nodes.size() > kNamesShown)
      names += " and " + std::to_string(nodes.size() - kNamesShown) + " more";
    list += (list.empty() ? "" : ", ") + op + (nodes.size() == 1 ? " (node " : " (nodes ") + names +
            ")";
  }
  std::vector<std::string> ops;
  for (const auto &entry : missing)
    ops.push_back(entry.first);
  throw UnsupportedOperatorsError(std::move(ops), path + ": " + std::to_string(count) +
                                                      " unsupported operator" +
                                                      (count == 1 ? "" : "s") + ": " + list);
}

std::unique_ptr<Graph> importOnnxModel(const std::string &path, const ImportOptions &options) {
  return ModelImporter(path, options).run();
}

bool onnxModelHasOps(const std::string &path, const std::vector<std::string> &opTypes) {
  onnx::ModelProto model;
  try {
    model = readModelProto(path);
  } catch (const Error &) {
    return false;
  }
  for (const onnx::NodeProto &node : model.graph().node())
    if ((node.domain().empty() || node.domain() == "ai.onnx") &&
        std::find(opTypes.begin(), opTypes.end(), node.op_type()) != opTypes.end())
      return true;
  return false;
}

Tensor loadTensorProtoFile(const std::string &path, std::string *name) {
  onnx::TensorProto proto;
  parseProtobufFile(path, proto, "a serialized ONNX TensorProto");
  if (name)
    *name = proto.name();
  DecodedTensor decoded = decodeTensor(
      proto, path + ": tensor" + (proto.name().empty() ? "" : " '" + proto.name() + "'"));
  return Tensor(decoded.type, std::move(decoded.bytes));
}

} // namespace bundlefit
