//===- ProfileYaml.cpp - Glow's profile YAML out and in ---------------------===//
//
// Writing is plain text (deterministic, Glow's key order); reading goes
// through yaml-cpp and then checks every field, because profiles come from
// users and from other tools (a libFuzzer target drives parseProfile).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/Profile.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace bundlefit {

namespace {

/// Shortest text that reads back as the same float (Glow prints all digits
/// for the same reason: power-of-two scales must survive the round trip).
std::string floatText(float value) {
  char buffer[64];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, double(value));
    if (std::strtof(buffer, nullptr) == value)
      break;
  }
  return buffer;
}

std::string countText(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

/// A YAML scalar that reads back as exactly `text`. Single quotes need only
/// the quote escaped, but YAML folds line breaks inside them (one break reads
/// as a space), so a name holding a control character - an ONNX name may, and
/// a folded multi-line name read from a profile does - goes out double-quoted
/// with every control character as a \xNN escape. Found by
/// fuzz/ProfileFuzzer.cpp.
std::string quoted(const std::string &text) {
  bool hasControl = false;
  for (unsigned char c : text)
    hasControl |= c < 0x20 || c == 0x7f;
  std::string out = hasControl ? "\"" : "'";
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (!hasControl) {
      out += c == '\'' ? std::string("''") : std::string(1, c);
    } else if (byte < 0x20 || byte == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", byte);
      out += escape;
    } else {
      out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    }
  }
  return out + (hasControl ? "\"" : "'");
}

[[noreturn]] void malformed(const std::string &source, const std::string &what) {
  throw Error(ExitCode::BadInputFile, source + ": not a valid profile: " + what);
}

/// Rejects, before yaml-cpp sees them, texts that are never profiles and that
/// yaml-cpp 0.7 cannot be trusted with:
///  - flow nesting deeper than 32 levels or indentation past 128 columns
///    (yaml-cpp guards its recursion, but such input is not a profile);
///  - a ',' outside flow collections and quotes (",", "&a ,", "{a: 1},"...),
///    and '&', '!', '*' (anchors, tags, aliases) and directives: on several
///    such inputs yaml-cpp 0.7 loops forever. Profiles need none of them:
///    names with such characters are quoted (by bundlefit and by Glow's LLVM
///    YAML writer), numbers are plain;
///  - control characters (a NUL before ',' also hangs yaml-cpp 0.7).
/// The scan is conservative: it may refuse odd but valid YAML, never a
/// profile bundlefit or Glow writes.
void checkShape(const std::string &text, const std::string &source) {
  auto opensNode = [](char c) {
    return c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '[' || c == '{' || c == ',' ||
           c == ':' || c == '-' || c == '?';
  };
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
      malformed(source, "control character at byte " + std::to_string(i) + " (not a text file)");
  }
  int depth = 0;
  size_t column = 0;
  char previous = '\n';
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      column = 0;
      previous = c;
      continue;
    }
    if (column == 0) {
      size_t indent = text.find_first_not_of(" -?:\t", i);
      if ((indent == std::string::npos ? text.size() : indent) - i > 128)
        malformed(source, "indentation deeper than 128 columns");
      if (c == '%')
        malformed(source, "YAML directives are not used in profiles");
    }
    ++column;
    if ((c == '\'' || c == '"') && opensNode(previous)) {
      // Skip the quoted scalar ('' and \" escape the quote).
      size_t start = i;
      for (++i; i < text.size(); ++i) {
        if (c == '"' && text[i] == '\\') {
          ++i;
          continue;
        }
        if (text[i] == c) {
          if (c == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
            ++i;
            continue;
          }
          break;
        }
      }
      if (i >= text.size())
        malformed(source, "quoted scalar at byte " + std::to_string(start) + " is not closed");
      previous = c;
      continue;
    }
    if (c == '#' && (previous == ' ' || previous == '\t' || previous == '\n')) {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
      continue;
    }
    if (c == '&' || c == '!' || c == '*')
      malformed(source, "anchors, tags and aliases are not used in profiles");
    if (c == '[' || c == '{') {
      if (++depth > 32)
        malformed(source, "nesting deeper than 32 levels");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      malformed(source, "unexpected ',' outside a flow sequence");
    }
    previous = c;
  }
}

/// Walks the documents without building nodes (see checkDocumentCount).
class DocumentCounter : public YAML::EventHandler {
public:
  void OnDocumentStart(const YAML::Mark &) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark &, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark &, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark &, const std::string &, YAML::anchor_t,
                const std::string &) override {}
  void OnSequenceStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

/// yaml-cpp 0.7's LoadAll never returns on some malformed streams: a token
/// that starts no node (a lone ",") yields an empty document forever without
/// being consumed, growing memory (jbeder/yaml-cpp#1040; fixed upstream after
/// Debian's 0.7). Found by fuzz/ProfileFuzzer.cpp. Walk the documents first
/// with a cap that a profile (three documents) never reaches.
void checkDocumentCount(const std::string &text, const std::string &source) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentCounter counter;
  for (int documents = 0; parser.HandleNextDocument(counter);)
    if (++documents > 16)
      malformed(source, "more than 16 YAML documents (a stray ',', ']' or '}'?)");
}

std::string scalarOf(const YAML::Node &node, const std::string &source, const std::string &what) {
  if (!node || !node.IsScalar())
    malformed(source, what + " must be a scalar");
  return node.Scalar();
}

double numberOf(const YAML::Node &node, const std::string &source, const std::string &what) {
  std::string text = scalarOf(node, source, what);
  const char *begin = text.c_str();
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(begin, &end);
  if (text.empty() || end == begin || *end != '\0' || errno == ERANGE || !std::isfinite(value))
    malformed(source, what + " '" + text.substr(0, 40) + "' is not a finite number");
  return value;
}

uint64_t hashOf(const YAML::Node &node, const std::string &source) {
  std::string text = scalarOf(node, source, "GraphPreLowerHash");
  size_t start = text.rfind("0x", 0) == 0 || text.rfind("0X", 0) == 0 ? 2 : 0;
  if (text.size() == start || text.size() - start > 16)
    malformed(source, "GraphPreLowerHash '" + text.substr(0, 40) + "' is not a 64-bit hex number");
  uint64_t value = 0;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    int digit = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
    if (digit < 0)
      malformed(source,
                "GraphPreLowerHash '" + text.substr(0, 40) + "' is not a 64-bit hex number");
    value = value << 4 | uint64_t(digit);
  }
  return value;
}

TensorProfile entryOf(const YAML::Node &node, size_t index, const std::string &source) {
  std::string where = "entry " + std::to_string(index);
  if (!node.IsMap())
    malformed(source, where + " must be a mapping with NodeOutputName, Min, Max, Histogram");
  TensorProfile entry;
  entry.name = scalarOf(node["NodeOutputName"], source, where + " NodeOutputName");
  where += " ('" + entry.name.substr(0, 60) + "')";
  double min = numberOf(node["Min"], source, where + " Min");
  double max = numberOf(node["Max"], source, where + " Max");
  if (min > max)
    malformed(source, where + " has Min > Max");
  if (std::abs(min) > 3.4e38 || std::abs(max) > 3.4e38)
    malformed(source, where + " has a range outside float");
  entry.min = float(min);
  entry.max = float(max);
  YAML::Node histogram = node["Histogram"];
  if (!histogram || !histogram.IsSequence())
    malformed(source, where + " Histogram must be a sequence of counts");
  if (histogram.size() > 65536)
    malformed(source, where + " Histogram has more than 65536 bins");
  for (size_t i = 0; i < histogram.size(); ++i) {
    double count = numberOf(histogram[i], source, where + " Histogram bin");
    if (count < 0)
      malformed(source, where + " Histogram has a negative count");
    entry.histogram.push_back(count);
  }
  return entry;
}

ProfileData parseDocuments(const std::vector<YAML::Node> &documents, const std::string &source) {
  if (documents.size() < 2)
    malformed(source, "expected a GraphPreLowerHash document and a list of tensors");
  ProfileData data;
  const YAML::Node &header = documents[0];
  if (!header.IsMap() || !header["GraphPreLowerHash"])
    malformed(source, "first document must hold GraphPreLowerHash");
  data.modelHash = hashOf(header["GraphPreLowerHash"], source);

  const YAML::Node &entries = documents[1];
  if (!entries.IsSequence() && !entries.IsNull())
    malformed(source, "second document must be a list of NodeOutputName/Min/Max/Histogram");
  std::set<std::string> names;
  for (size_t i = 0; entries.IsSequence() && i < entries.size(); ++i) {
    TensorProfile entry = entryOf(entries[i], i, source);
    if (!names.insert(entry.name).second)
      malformed(source, "tensor '" + entry.name.substr(0, 60) + "' appears twice");
    data.tensors.push_back(std::move(entry));
  }

  if (documents.size() > 2 && documents[2].IsMap() && documents[2]["BundlefitProfile"]) {
    const YAML::Node &extra = documents[2];
    if (extra["Model"])
      data.modelName = scalarOf(extra["Model"], source, "Model");
    if (extra["Samples"]) {
      double samples = numberOf(extra["Samples"], source, "Samples");
      if (samples < 0 || samples > 1e18)
        malformed(source, "Samples out of range");
      data.samples = uint64_t(samples);
    }
  }
  return data;
}

} // namespace

std::string renderProfile(const ProfileData &profile) {
  std::ostringstream out;
  char hash[32];
  std::snprintf(hash, sizeof hash, "0x%016llX", static_cast<unsigned long long>(profile.modelHash));
  out << "# bundlefit profile (Glow's layout). GraphPreLowerHash is the FNV-1a 64 hash of the\n"
      << "# ONNX file; the third document is bundlefit's and Glow does not read it.\n"
      << "---\nGraphPreLowerHash: " << hash << "\n...\n---\n";
  if (profile.tensors.empty())
    out << "[]\n";
  for (const TensorProfile &tensor : profile.tensors) {
    out << "- NodeOutputName: " << quoted(tensor.name) << "\n"
        << "  Min:             " << floatText(tensor.min) << "\n"
        << "  Max:             " << floatText(tensor.max) << "\n"
        << "  Histogram:       [ ";
    for (size_t i = 0; i < tensor.histogram.size(); ++i)
      out << (i ? ", " : "") << countText(tensor.histogram[i]);
    out << " ]\n";
  }
  out << "...\n---\nBundlefitProfile: 1\nModel: " << quoted(profile.modelName)
      << "\nSamples: " << profile.samples << "\n...\n";
  return out.str();
}

ProfileData parseProfile(const std::string &yamlText, const std::string &sourceName) {
  checkShape(yamlText, sourceName);
  std::vector<YAML::Node> documents;
  try {
    checkDocumentCount(yamlText, sourceName);
    documents = YAML::LoadAll(yamlText);
    return parseDocuments(documents, sourceName);
  } catch (const Error &) {
    throw;
  } catch (const YAML::Exception &e) {
    malformed(sourceName, "YAML error at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  } catch (const std::exception &e) {
    malformed(sourceName, e.what());
  }
}

ProfileData loadProfile(const std::string &path) {
  return parseProfile(readInputFile(path, "profile"), path);
}

} // namespace bundlefit
