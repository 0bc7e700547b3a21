//===- ErrorOf.h - The bundlefit::Error a call throws, for CHECKs -----------===//
//
// Error tests compare the exit code and the one-line message; the ONNX and
// TFLite importer tests (and the others including tests/onnx/TestModel.h)
// share this helper.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/support/Error.h"

#include <string>
#include <utility>

namespace bundlefit::testing {

/// Runs `f`; returns the bundlefit::Error it threw (code, message), or
/// {Success, "<no error>"}.
template <typename F> std::pair<ExitCode, std::string> errorOf(F &&f) {
  try {
    f();
  } catch (const Error &error) {
    return {error.code(), error.what()};
  }
  return {ExitCode::Success, "<no error>"};
}

} // namespace bundlefit::testing
