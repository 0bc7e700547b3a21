#include "bundlefit/support/Error.h"

namespace bundlefit {

void fatalInternal(const std::string &message) {
  throw Error(ExitCode::Internal, "internal error: " + message);
}

} // namespace bundlefit
