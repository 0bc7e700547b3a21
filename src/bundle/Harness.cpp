//===- Harness.cpp - Generated drivers, startup code and linker scripts ----===//
#include "Harness.h"

#include "Templates.h"

#include "bundlefit/support/CheckedMath.h"

#include <cstdio>
#include <sstream>

namespace bundlefit {
namespace harness {

using templates::withoutFinalNewline;

namespace {

std::string u64(uint64_t v) { return std::to_string(v) + "ull"; }

/// A C string literal for text we generated or that is a legal identifier;
/// anything else is escaped.
std::string cString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

/// Size of a region's backing array: at least 64 bytes, a multiple of 64.
uint64_t regionBytes(uint64_t size) { return size == 0 ? 64 : alignUp(size, 64); }

} // namespace

std::string FirmwareLayout::describe(const BundleRunSpec &spec) const {
  std::ostringstream s;
  const CortexMBoard::Memory &w = weightsInExtra ? board->extra : board->code;
  const CortexMBoard::Memory &r = regionsInExtra ? board->extra : board->ram;
  s << board->machine << ": code " << board->code.name << " @"
    << templates::hexAddress(board->code.base) << "; constantWeight (" << spec.constantSize
    << " B) + inputs in " << w.name << " @" << templates::hexAddress(w.base) << "; mutableWeight ("
    << spec.mutableSize << " B) + activations (" << spec.activationsSize << " B) in " << r.name
    << " @" << templates::hexAddress(r.base) << "; stack " << stackBytes << " B in "
    << board->ram.name;
  return s.str();
}

std::string hostDriverSource(const BundleRunSpec &spec, const std::vector<IoSlot> &slots) {
  // Every input/output file holds spec.batch samples back to back: they are
  // staged in bf_in<i>/bf_out<i> and copied one sample at a time.
  const uint64_t batch = spec.batch;
  std::ostringstream stage, copyIn, copyOut, write;
  for (const IoSlot &s : slots) {
    std::string buffer = std::string(s.isInput ? "bf_in" : "bf_out") + std::to_string(s.index);
    stage << "  uint8_t *" << buffer << " = bf_region(" << u64(s.bytes * batch) << "); /* "
          << (s.isInput ? "input " : "output ") << cString(s.name) << " */\n";
    if (s.isInput) {
      stage << "  if (bf_read(\"in" << s.index << ".bin\", " << buffer << ", "
            << u64(s.bytes * batch) << "))\n    return " << StatusIoFailed << ";\n";
      copyIn << "    memcpy(mutableWeight + " << u64(s.offset) << ", " << buffer << " + n * "
             << u64(s.bytes) << ", " << u64(s.bytes) << ");\n";
    } else {
      copyOut << "    memcpy(" << buffer << " + n * " << u64(s.bytes) << ", mutableWeight + "
              << u64(s.offset) << ", " << u64(s.bytes) << ");\n";
      write << "  if (bf_write(\"out" << s.index << ".bin\", " << buffer << ", "
            << u64(s.bytes * batch) << "))\n    return " << StatusIoFailed << ";\n";
    }
  }
  return templates::fillTemplate(templates::kHostDriverTemplate,
                                 {{"NETWORK", spec.networkName},
                                  {"BATCH", std::to_string(batch)},
                                  {"CONSTANT_SIZE", std::to_string(spec.constantSize)},
                                  {"MUTABLE_SIZE", std::to_string(spec.mutableSize)},
                                  {"ACTIVATIONS_SIZE", std::to_string(spec.activationsSize)},
                                  {"STATUS_IO_FAILED", std::to_string(StatusIoFailed)},
                                  {"STATUS_ENTRY_FAILED", std::to_string(StatusEntryFailed)},
                                  {"STAGE_IO", withoutFinalNewline(stage.str())},
                                  {"COPY_INPUTS", withoutFinalNewline(copyIn.str())},
                                  {"COPY_OUTPUTS", withoutFinalNewline(copyOut.str())},
                                  {"WRITE_OUTPUTS", withoutFinalNewline(write.str())}});
}

std::string firmwareSource(const BundleRunSpec &spec, const std::vector<IoSlot> &slots,
                           const FirmwareLayout &layout) {
  const CortexMBoard &board = *layout.board;
  bool armv8m = board.target == "cortex-m33" || board.target == "cortex-m55";
  std::ostringstream incbin, declarations, open, copyIn, write, close;
  if (spec.constantSize > 0 && !spec.partImage) // a part image links the placed weights
    incbin << "        \"  .incbin \\\"weights.bin\\\"\\n\"\n";
  incbin << "        \"  .balign 64\\n\"\n";
  for (const IoSlot &s : slots) {
    std::string index = std::to_string(s.index);
    if (s.isInput) {
      incbin << "        \"  .global bf_in" << index << "\\n\"\n"
             << "        \"  .type bf_in" << index << ", %object\\n\"\n"
             << "        \"bf_in" << index << ":\\n\"\n";
      if (s.bytes > 0)
        incbin << "        \"  .incbin \\\"in" << index << ".bin\\\"\\n\"\n";
      incbin << "        \"  .balign 64\\n\"\n";
      declarations << "extern const uint8_t bf_in" << index << "[]; /* input " << cString(s.name)
                   << " */\n";
      copyIn << "    memcpy(bf_mutable + " << u64(s.offset) << ", bf_in" << index << " + n * "
             << u64(s.bytes) << ", " << u64(s.bytes) << ");\n";
      continue;
    }
    open << "  int bf_fd" << index << " = bf_open_write(\"out" << index << ".bin\"); /* output "
         << cString(s.name) << " */\n"
         << "  if (bf_fd" << index << " < 0)\n    bf_write_failed(" << index << ");\n";
    write << "    if (bf_write_fd(bf_fd" << index << ", bf_mutable + " << u64(s.offset) << ", "
          << u64(s.bytes) << "))\n      bf_write_failed(" << index << ");\n";
    close << "  if (bf_close_fd(bf_fd" << index << "))\n    bf_write_failed(" << index << ");\n";
  }
  const PartImage *image = spec.partImage ? &*spec.partImage : nullptr;
  return templates::fillTemplate(
      templates::kQemuFirmwareTemplate,
      {{"NETWORK", spec.networkName},
       {"DECLARATIONS", image ? image->declarations : ""},
       {"STARTUP", image ? image->startup : ""},
       {"CALL", image ? image->call
                      : spec.networkName + "((uint8_t *)bf_weights, bf_mutable, bf_activations)"},
       {"MACHINE", board.machine},
       {"CPU", board.cpu},
       {"BATCH", std::to_string(spec.batch)},
       {"ARMV8M", armv8m ? "1" : "0"},
       {"MUTABLE_BYTES", std::to_string(regionBytes(spec.mutableSize))},
       {"ACTIVATIONS_BYTES", std::to_string(regionBytes(spec.activationsSize))},
       {"STATUS_IO_FAILED", std::to_string(StatusIoFailed)},
       {"STATUS_ENTRY_FAILED", std::to_string(StatusEntryFailed)},
       {"STATUS_FAULT", std::to_string(StatusFault)},
       {"INCBIN_DATA", withoutFinalNewline(incbin.str())},
       {"INPUT_DECLARATIONS", withoutFinalNewline(declarations.str())},
       {"OPEN_OUTPUTS", withoutFinalNewline(open.str())},
       {"COPY_INPUTS", withoutFinalNewline(copyIn.str())},
       {"WRITE_OUTPUTS", withoutFinalNewline(write.str())},
       {"CLOSE_OUTPUTS", withoutFinalNewline(close.str())}});
}

std::string linkerScript(const FirmwareLayout &layout) {
  const CortexMBoard &b = *layout.board;
  return templates::fillTemplate(templates::kQemuLinkerScriptTemplate,
                                 {{"MACHINE", b.machine},
                                  {"CPU", b.cpu},
                                  {"CODE_BASE", templates::hexAddress(b.code.base)},
                                  {"CODE_SIZE", templates::hexAddress(b.code.size)},
                                  {"CODE_NAME", b.code.name},
                                  {"RAM_BASE", templates::hexAddress(b.ram.base)},
                                  {"RAM_SIZE", templates::hexAddress(b.ram.size)},
                                  {"RAM_NAME", b.ram.name},
                                  {"EXTRA_BASE", templates::hexAddress(b.extra.base)},
                                  {"EXTRA_SIZE", templates::hexAddress(b.extra.size)},
                                  {"EXTRA_NAME", b.extra.name},
                                  {"WEIGHTS_REGION", layout.weightsInExtra ? "EXTRA" : "CODE"},
                                  {"REGIONS_REGION", layout.regionsInExtra ? "EXTRA" : "RAM"},
                                  {"HEAP_BYTES", templates::hexAddress(layout.heapBytes)},
                                  {"STACK_BYTES", templates::hexAddress(layout.stackBytes)}});
}

} // namespace harness
} // namespace bundlefit
