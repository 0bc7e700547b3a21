//===- LibraryCode.cpp - Code a bundle links from a kernel library ---------===//
#include "bundlefit/device/LibraryCode.h"

#include "bundlefit/device/Device.h"
#include "bundlefit/support/Error.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

namespace bundlefit::device {

LibraryCodeSize cmsisNnCodeBytes(const std::string &core,
                                 const std::vector<std::string> &functions) {
  LibraryCodeSize size;
  const std::string path = DeviceDatabase::defaultDirectory() + "/libraries/cmsis-nn-code.json";
  std::ifstream in(path);
  if (!in) {
    size.why = "code not counted: " + path + " is missing";
    return size;
  }
  nlohmann::json table;
  try {
    in >> table;
  } catch (const nlohmann::json::exception &e) {
    throw Error(ExitCode::BadInputFile, path + ": not valid JSON (" + e.what() + ")");
  }
  size.source = table.value("source", "");
  const nlohmann::json *cores = table.contains("cores") ? &table["cores"] : nullptr;
  if (!cores || !cores->contains(core)) {
    size.why = "code not counted: " + path + " has no figures for " + core;
    return size;
  }
  const nlohmann::json &entry = (*cores)[core];
  if (!entry.contains("symbols") || !entry.contains("functions") || !entry["symbols"].is_object() ||
      !entry["functions"].is_object())
    throw Error(ExitCode::BadInputFile,
                path + ": cores." + core + ": expected objects 'symbols' and 'functions'");
  std::set<std::string> kept;
  std::vector<std::string> missing;
  for (const std::string &function : functions) {
    if (!entry["functions"].contains(function)) {
      missing.push_back(function);
      continue;
    }
    for (const nlohmann::json &symbol : entry["functions"][function])
      if (symbol.is_string())
        kept.insert(symbol.get<std::string>());
  }
  for (const std::string &symbol : kept) {
    const nlohmann::json &bytes = entry["symbols"].value(symbol, nlohmann::json());
    if (!bytes.is_number_unsigned())
      throw Error(ExitCode::BadInputFile,
                  path + ": cores." + core + ".symbols." + symbol + ": expected a byte count");
    size.bytes += bytes.get<uint64_t>();
  }
  size.measured = missing.empty();
  if (!missing.empty()) {
    size.why = "code of " + std::to_string(missing.size()) + " function(s) not in " + path +
               " for " + core + " (first: " + missing.front() + ")";
  }
  return size;
}

} // namespace bundlefit::device
