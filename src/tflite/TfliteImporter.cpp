//===- TfliteImporter.cpp - A .tflite model to the graph IR ----------------===//
#include "bundlefit/tflite/TfliteImporter.h"

#include "TfliteConverter.h"
#include "TfliteFile.h"
#include "TfliteInt16x8.h"
#include "TfliteOperators.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <filesystem>
#include <fstream>
#include <map>

namespace bundlefit {

using namespace tflite_import;

namespace {

/// "2 unsupported operators: CUSTOM 'Foo' (operators 3, 7), WHILE (operator 9)";
/// a supported builtin's refused variant is named by unsupportedVariant.
std::string listUnsupported(const TfliteFile &file, bool int16x8) {
  std::map<std::string, std::vector<size_t>> byName;
  std::vector<std::string> order;
  const auto *ops = file.subgraph().operators();
  for (size_t i = 0; ops && i < ops->size(); ++i) {
    const tflite::Operator &op = *ops->Get(unsigned(i));
    const int32_t code = file.builtinCodeOf(op);
    std::string name = int16x8                    ? int16x8Unsupported(file, op, code)
                       : isSupportedBuiltin(code) ? unsupportedVariant(file, op, code)
                                                  : file.operatorName(op);
    if (name.empty())
      continue;
    if (!byName.count(name))
      order.push_back(name);
    byName[name].push_back(i);
  }
  if (order.empty())
    return "";
  std::string text = std::to_string(order.size()) + " unsupported operator" +
                     (order.size() == 1 ? "" : "s") + ": ";
  for (size_t n = 0; n < order.size(); ++n) {
    const std::vector<size_t> &where = byName[order[n]];
    text += (n ? ", " : "") + order[n] + " (operator" + (where.size() == 1 ? " " : "s ");
    for (size_t k = 0; k < where.size(); ++k)
      text += (k ? ", " : "") + std::to_string(where[k]);
    text += ")";
  }
  return text;
}

/// A node standing for an operator bundlefit cannot run (inspect only):
/// op type "tflite.<NAME>", the model's output types.
void keepUnsupported(Converter &converter, const tflite::Operator &op) {
  const TfliteFile &file = converter.file();
  std::vector<Value *> inputs;
  if (op.inputs())
    for (int32_t t : *op.inputs())
      inputs.push_back(t < 0 ? nullptr : converter.value(t));
  std::vector<std::string> names;
  for (int32_t t : *op.outputs())
    names.push_back(file.tensor(t).name() ? file.tensor(t).name()->str() : "tensor");
  Graph &graph = converter.graph();
  Node *node = graph.addNode("tflite." + file.operatorName(op), graph.uniqueNodeName(names[0]),
                             inputs, names);
  for (size_t i = 0; i < op.outputs()->size(); ++i) {
    int32_t t = op.outputs()->Get(unsigned(i));
    TensorInfo info = converter.info(t);
    Value *out = node->outputs[i];
    out->type = TensorType{info.quantized() ? DType::Int8 : DType::Float32, info.shape, info.quant};
    out->typeKnown = true;
    converter.alias(t, out, false);
  }
}

std::string graphName(const TfliteFile &file) {
  const auto *name = file.subgraph().name();
  if (name && !name->str().empty() && name->str() != "main")
    return name->str();
  return std::filesystem::path(file.path()).stem().string();
}

} // namespace

bool isTfliteModelFile(const std::string &path) {
  // Only a regular file is opened here: a FIFO would block, and the
  // importer that reads the path refuses anything else with its own error.
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    return std::filesystem::path(path).extension() == ".tflite";
  std::ifstream in(path, std::ios::binary);
  uint8_t head[8] = {};
  if (in)
    in.read(reinterpret_cast<char *>(head), sizeof(head));
  if (in && in.gcount() == sizeof(head))
    return hasTfliteIdentifier(head, sizeof(head));
  return std::filesystem::path(path).extension() == ".tflite";
}

std::unique_ptr<Graph> importTfliteModel(const std::string &path,
                                         const TfliteImportOptions &options) {
  TfliteFile file(path);
  const bool int16x8 = isInt16x8Model(file);
  if (options.rejectUnsupportedOps || int16x8) {
    std::string unsupported = listUnsupported(file, int16x8);
    if (!unsupported.empty())
      throw Error(ExitCode::Unsupported, path + ": " + unsupported);
  }
  auto graph = std::make_unique<Graph>();
  graph->name = graphName(file);
  if (int16x8) {
    importInt16x8(file, *graph);
    graph->removeUnusedValues();
    graph->verify();
    return graph;
  }
  Converter converter(file, *graph);
  converter.addGraphInputs();
  const auto *ops = file.subgraph().operators();
  for (size_t i = 0; ops && i < ops->size(); ++i) {
    const tflite::Operator &op = *ops->Get(unsigned(i));
    converter.setOperator(i);
    const int32_t code = file.builtinCodeOf(op);
    if (isSupportedBuiltin(code) && unsupportedVariant(file, op, code).empty())
      convertOperator(converter, op, code);
    else
      keepUnsupported(converter, op);
  }
  converter.clearOperator();
  converter.markGraphOutputs();
  graph->removeUnusedValues();
  graph->verify();
  return graph;
}

namespace {

/// Whether a tensor of `type` has no buffer data (an activation, not a
/// constant). False for an unreadable file.
bool hasActivationOf(const std::string &path, tflite::TensorType type) {
  try {
    TfliteFile file(path);
    for (size_t t = 0; t < file.numTensors(); ++t)
      if (file.tensor(int32_t(t)).type() == type && !file.dataOf(int32_t(t)).size)
        return true;
  } catch (const Error &) {
  }
  return false;
}

} // namespace

bool tfliteModelIsQuantized(const std::string &path) {
  return hasActivationOf(path, tflite::TensorType_INT8);
}

bool tfliteModelHasInt16Activations(const std::string &path) {
  return hasActivationOf(path, tflite::TensorType_INT16);
}

bool tfliteModelHasInt8Io(const std::string &path) {
  try {
    TfliteFile file(path);
    Graph graph;
    return Converter(file, graph).int8Io();
  } catch (const Error &) {
  }
  return false;
}

std::vector<std::string> supportedTfliteOperators() { return supportedBuiltinNames(); }

} // namespace bundlefit
