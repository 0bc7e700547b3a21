#include "bundlefit/ir/Op.h"

#include <array>
#include <unordered_map>

namespace bundlefit {

namespace {

const std::array<std::string, kNumOps + 1> &names() {
  static const std::array<std::string, kNumOps + 1> table = {
#define BUNDLEFIT_OP(Name) #Name,
#define BUNDLEFIT_MODEL_OP(Id, Spelling) Spelling,
#include "bundlefit/ir/Ops.def"
      "<unknown>",
  };
  return table;
}

constexpr bool kModelOnly[] = {
#define BUNDLEFIT_OP(Name) false,
#define BUNDLEFIT_MODEL_OP(Id, Spelling) true,
#include "bundlefit/ir/Ops.def"
    false, // Unknown
};

} // namespace

const std::string &opName(Op op) { return names()[static_cast<size_t>(op)]; }

bool isModelOnlyOp(Op op) { return kModelOnly[static_cast<size_t>(op)]; }

Op opFromName(std::string_view name) {
  static const std::unordered_map<std::string_view, Op> byName = [] {
    std::unordered_map<std::string_view, Op> map;
    for (size_t i = 0; i < kNumOps; ++i)
      map.emplace(names()[i], static_cast<Op>(i));
    return map;
  }();
  auto it = byName.find(name);
  return it == byName.end() ? Op::Unknown : it->second;
}

} // namespace bundlefit
