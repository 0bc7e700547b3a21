//===- ImportOptionParsing.cpp - --model-input and --define-symbol text ---===//

#include "bundlefit/onnx/OnnxImporter.h"

#include "bundlefit/support/Error.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace bundlefit {

namespace {

std::string trim(const std::string &text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos)
    return "";
  size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    parts.push_back(trim(text.substr(start, comma - start)));
    if (comma == std::string::npos)
      return parts;
    start = comma + 1;
  }
}

bool parseInt64(const std::string &text, int64_t &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end != '\0')
    return false;
  out = value;
  return true;
}

bool parseFloat(const std::string &text, float &out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  float value = std::strtof(text.c_str(), &end);
  if (errno || *end != '\0' || !std::isfinite(value))
    return false;
  out = value;
  return true;
}

/// The element type spellings --model-input accepts; Glow's names included.
bool parseInputType(const std::string &text, DType &dtype, bool &quantized) {
  quantized = false;
  if (text == "int8q" || text == "uint8q") {
    dtype = text == "int8q" ? DType::Int8 : DType::UInt8;
    quantized = true;
    return true;
  }
  if (text == "int32i") {
    dtype = DType::Int32;
    return true;
  }
  if (text == "int64i") {
    dtype = DType::Int64;
    return true;
  }
  return parseDType(text, dtype);
}

} // namespace

ModelInputOverride parseModelInputOption(const std::string &text) {
  const std::string option = "--model-input '" + text + "': ";
  auto usage = [&](const std::string &problem) {
    return Error(ExitCode::Usage, option + problem +
                                      " (expected name,type,[d0,d1,...] or "
                                      "name,int8q,scale,offset,[d0,d1,...])");
  };

  size_t open = text.find('[');
  if (open == std::string::npos) {
    // Glow's quantized form may leave the shape out: the model's stays.
    std::vector<std::string> fields = splitCommas(text);
    DType dtype;
    bool quantized = false;
    if (fields.size() != 4 || !parseInputType(trim(fields[1]), dtype, quantized) || !quantized)
      throw usage("no shape in brackets");
    ModelInputOverride result = parseModelInputOption(text + ",[1]");
    result.shape.clear();
    result.shapeGiven = false;
    return result;
  }
  std::string shapeText = trim(text.substr(open));
  if (shapeText.back() != ']')
    throw usage("the shape must end with ']'");
  std::string prefix = trim(text.substr(0, open));
  if (prefix.empty() || prefix.back() != ',')
    throw usage("a comma must separate the type from the shape");
  prefix.pop_back();

  ModelInputOverride result;
  std::string dims = trim(shapeText.substr(1, shapeText.size() - 2));
  if (!dims.empty()) {
    for (const std::string &dimText : splitCommas(dims)) {
      int64_t dim = 0;
      if (!parseInt64(dimText, dim) || dim < 1)
        throw usage("dimension '" + dimText + "' is not a positive integer");
      result.shape.push_back(dim);
    }
  }

  std::vector<std::string> fields = splitCommas(prefix);
  if (fields.size() != 2 && fields.size() != 4)
    throw usage("wrong number of fields before the shape");
  result.name = fields[0];
  if (result.name.empty())
    throw usage("the input name is empty");
  bool quantized = false;
  if (!parseInputType(fields[1], result.dtype, quantized))
    throw usage("unknown type '" + fields[1] +
                "' (use float, int8, uint8, int32, int64, bool, int8q or uint8q)");
  if (quantized != (fields.size() == 4))
    throw usage(quantized ? "type '" + fields[1] + "' needs a scale and an offset"
                          : "only int8q/uint8q take a scale and an offset");
  if (quantized) {
    float scale = 0.0f;
    int64_t offset = 0;
    if (!parseFloat(fields[2], scale) || scale <= 0.0f)
      throw usage("scale '" + fields[2] + "' is not a positive number");
    const bool isSigned = result.dtype == DType::Int8;
    if (!parseInt64(fields[3], offset) || offset < (isSigned ? -128 : 0) ||
        offset > (isSigned ? 127 : 255))
      throw usage("offset '" + fields[3] + "' is not an integer in the " +
                  (isSigned ? "int8" : "uint8") + " range");
    result.quant.scales = {scale};
    result.quant.zeroPoints = {int32_t(offset)};
  }
  return result;
}

std::pair<std::string, int64_t> parseDefineSymbolOption(const std::string &text) {
  size_t separator = text.find('=');
  if (separator == std::string::npos)
    separator = text.rfind(',');
  auto usage = [&](const std::string &problem) {
    return Error(ExitCode::Usage, "--define-symbol '" + text + "': " + problem +
                                      " (expected name=value, e.g. batch_size=1)");
  };
  if (separator == std::string::npos)
    throw usage("no '=' between the symbol and its value");
  std::string name = trim(text.substr(0, separator));
  std::string valueText = trim(text.substr(separator + 1));
  if (name.empty())
    throw usage("the symbol name is empty");
  int64_t value = 0;
  if (!parseInt64(valueText, value) || value < 1)
    throw usage("value '" + valueText + "' is not a positive integer");
  return {name, value};
}

} // namespace bundlefit
