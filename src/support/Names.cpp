#include "bundlefit/support/Names.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace bundlefit {

namespace {

/// Identifiers a generated header cannot define or redefine: C and C++
/// keywords (the header is included from both), the <stdint.h> names, and the
/// macros and types of the Glow bundle API. Sorted for binary search.
const char *const kReservedIdentifiers[] = {"BundleConfig",
                                            "GLOW_GET_ADDR",
                                            "GLOW_MEM_ALIGN",
                                            "GLOW_SUCCESS",
                                            "INT16_MAX",
                                            "INT16_MIN",
                                            "INT32_MAX",
                                            "INT32_MIN",
                                            "INT64_MAX",
                                            "INT64_MIN",
                                            "INT8_MAX",
                                            "INT8_MIN",
                                            "INTMAX_MAX",
                                            "INTPTR_MAX",
                                            "NULL",
                                            "SIZE_MAX",
                                            "SymbolTableEntry",
                                            "UINT16_MAX",
                                            "UINT32_MAX",
                                            "UINT64_MAX",
                                            "UINT8_MAX",
                                            "UINTPTR_MAX",
                                            "_Alignas",
                                            "_Alignof",
                                            "_Atomic",
                                            "_Bool",
                                            "_Complex",
                                            "_GLOW_BUNDLE_COMMON_DEFS",
                                            "_Generic",
                                            "_Imaginary",
                                            "_Noreturn",
                                            "_Static_assert",
                                            "_Thread_local",
                                            "__cplusplus",
                                            "alignas",
                                            "alignof",
                                            "and",
                                            "and_eq",
                                            "asm",
                                            "auto",
                                            "bitand",
                                            "bitor",
                                            "bool",
                                            "break",
                                            "case",
                                            "catch",
                                            "char",
                                            "char16_t",
                                            "char32_t",
                                            "char8_t",
                                            "class",
                                            "co_await",
                                            "co_return",
                                            "co_yield",
                                            "compl",
                                            "concept",
                                            "const",
                                            "const_cast",
                                            "consteval",
                                            "constexpr",
                                            "constinit",
                                            "continue",
                                            "decltype",
                                            "default",
                                            "delete",
                                            "do",
                                            "double",
                                            "dynamic_cast",
                                            "else",
                                            "enum",
                                            "explicit",
                                            "export",
                                            "extern",
                                            "false",
                                            "float",
                                            "for",
                                            "friend",
                                            "goto",
                                            "if",
                                            "inline",
                                            "int",
                                            "int16_t",
                                            "int32_t",
                                            "int64_t",
                                            "int8_t",
                                            "int_fast16_t",
                                            "int_fast32_t",
                                            "int_fast64_t",
                                            "int_fast8_t",
                                            "int_least16_t",
                                            "int_least32_t",
                                            "int_least64_t",
                                            "int_least8_t",
                                            "intmax_t",
                                            "intptr_t",
                                            "long",
                                            "main",
                                            "mutable",
                                            "namespace",
                                            "new",
                                            "noexcept",
                                            "not",
                                            "not_eq",
                                            "nullptr",
                                            "operator",
                                            "or",
                                            "or_eq",
                                            "private",
                                            "protected",
                                            "ptrdiff_t",
                                            "public",
                                            "register",
                                            "reinterpret_cast",
                                            "requires",
                                            "restrict",
                                            "return",
                                            "short",
                                            "signed",
                                            "size_t",
                                            "sizeof",
                                            "static",
                                            "static_assert",
                                            "static_cast",
                                            "struct",
                                            "switch",
                                            "template",
                                            "this",
                                            "thread_local",
                                            "throw",
                                            "true",
                                            "try",
                                            "typedef",
                                            "typeid",
                                            "typename",
                                            "uint16_t",
                                            "uint32_t",
                                            "uint64_t",
                                            "uint8_t",
                                            "uint_fast16_t",
                                            "uint_fast32_t",
                                            "uint_fast64_t",
                                            "uint_fast8_t",
                                            "uint_least16_t",
                                            "uint_least32_t",
                                            "uint_least64_t",
                                            "uint_least8_t",
                                            "uintmax_t",
                                            "uintptr_t",
                                            "union",
                                            "unsigned",
                                            "using",
                                            "virtual",
                                            "void",
                                            "volatile",
                                            "wchar_t",
                                            "while",
                                            "xor",
                                            "xor_eq"};

} // namespace

bool isReservedIdentifier(const std::string &name) {
  // Also every name that starts with the bundle header guard's prefix.
  if (name.rfind("_GLOW_BUNDLE_", 0) == 0)
    return true;
  return std::binary_search(std::begin(kReservedIdentifiers), std::end(kReservedIdentifiers), name,
                            [](const std::string &a, const std::string &b) { return a < b; });
}

std::string legalizeName(const std::string &name) {
  std::string result;
  for (char c : name)
    result += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (result.empty() || std::isdigit(static_cast<unsigned char>(result[0])))
    result = "_" + result;
  if (isReservedIdentifier(result))
    result += "_";
  return result;
}

std::vector<std::string> uniqueLegalNames(const std::vector<std::string> &names,
                                          const std::set<std::string> &reserved) {
  std::set<std::string> taken = reserved;
  std::vector<std::string> result;
  result.reserve(names.size());
  for (const std::string &name : names) {
    const std::string base = legalizeName(name);
    std::string candidate = base;
    for (int suffix = 1; taken.count(candidate); ++suffix)
      candidate = base + "_" + std::to_string(suffix);
    taken.insert(candidate);
    result.push_back(candidate);
  }
  return result;
}

std::string networkNameFromPath(const std::string &path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  auto dot = base.find_last_of('.');
  if (dot != std::string::npos && dot > 0)
    base = base.substr(0, dot);
  return legalizeName(base);
}

std::string toUpper(std::string text) {
  for (char &c : text)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

} // namespace bundlefit
