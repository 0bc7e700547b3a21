//===- TfliteImporter.h - TensorFlow Lite flatbuffers to the graph IR ------===//
//
// The second front end, beside src/onnx: it reads a .tflite model (TFLite's
// flatbuffer schema, checked by the flatbuffers Verifier before anything is
// read) into the same Graph the ONNX importer and the quantizer produce, so
// nothing downstream knows which file a model came from:
//
// - float32 models become the float graph an ONNX export of them would be.
// - int8 models (TFLite's scheme: int8 activations with one scale and zero
//   point, int8 symmetric weights per tensor or per output channel, int32
//   bias at input scale x weight scale) become the int8 graph of
//   docs/quantized-ir.md directly, weights as the file stores them (no float
//   round trip). Inputs and outputs keep the model's types: an int8 input
//   stays int8 with its scale and zero point.
// - Layout: TFLite is NHWC, the IR NCHW. A 4-D tensor that convolutions or
//   pools read or write is held channels-first; a Transpose is inserted only
//   where an operator needs the other layout and the bytes differ (C == 1 or
//   H x W == 1 are the same bytes: a Reshape), and a fully connected layer
//   reading a channels-first tensor gets its weight columns permuted instead.
//
// Every operator is checked before any is converted: operators bundlefit
// cannot run (custom ops, control flow, unsupported builtins or options) are
// listed together in one Error(Unsupported). Every other problem is one
// Error naming the file and the tensor or operator ("operator 3
// (CONV_2D)"): BadInputFile for a file that is not a valid TFLite model
// (verifier failure, indices or buffers out of range, absurd shapes, wrong
// quantization arrays), Unsupported for legal TFLite bundlefit does not
// take (int16 activations, several subgraphs, dynamic shapes...).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <memory>
#include <string>
#include <vector>

namespace bundlefit {

struct TfliteImportOptions {
  /// Throw Error(Unsupported) listing every operator bundlefit cannot run.
  /// Off, such operators stay in the graph as nodes of op type
  /// "tflite.<BUILTIN_NAME>" with the model's output types (no command
  /// turns it off yet: every one refuses the model before any work).
  bool rejectUnsupportedOps = true;
};

/// Whether `path` holds a TFLite flatbuffer: the file identifier "TFL3" at
/// byte 4, or (for a file too short to tell) a .tflite extension.
bool isTfliteModelFile(const std::string &path);

/// Reads the TFLite model at `path` (one subgraph; up to 2 GB, with buffers
/// stored inline or after the flatbuffer) into a Graph named after the
/// subgraph (or the file stem). Node outputs have their types inferred.
std::unique_ptr<Graph> importTfliteModel(const std::string &path,
                                         const TfliteImportOptions &options = {});

/// Whether the model computes in int8 (any int8 activation tensor). False
/// for a file that is not a readable model: importTfliteModel reports that.
bool tfliteModelIsQuantized(const std::string &path);

/// Whether a non-constant tensor is int16 (an int16x8 model: integer
/// arithmetic throughout, so `--use-cmsis` needs no profile). False for an
/// unreadable file.
bool tfliteModelHasInt16Activations(const std::string &path);

/// Whether a graph input or output is int8: the model's I/O stays int8
/// (the driver keeps it so, --keep-int8-io). False for an unreadable file.
bool tfliteModelHasInt8Io(const std::string &path);

/// The builtin operators the importer converts, TFLite's names.
std::vector<std::string> supportedTfliteOperators();

} // namespace bundlefit
