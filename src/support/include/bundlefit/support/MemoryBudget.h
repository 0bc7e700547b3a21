//===- MemoryBudget.h - How much memory one command may use ---------------===//
//
// A model can ask for more memory than the machine has in a few hundred
// bytes: an LSTM with batch 2^30, ConstantOfShape [2^28] folded into a
// constant, an int64 Range to 2^31. Every place that allocates in proportion
// to a size read from a model or file (shape inference's constants, constant
// folding, recurrent expansion, the interpreter, weight packing, input files)
// asks checkMemoryBudget first, and a request past the budget is refused by
// name, never an out-of-memory kill.
//
// The budget (--max-memory) defaults to half of the smallest of the physical
// RAM, the address space the process may use (ulimit -v), its data segment
// limit (ulimit -d) and its cgroup's memory.max.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

namespace bundlefit {

/// The budget in bytes (the default, until setMemoryBudget).
uint64_t memoryBudget();

/// --max-memory: replaces the default for the rest of the process.
void setMemoryBudget(uint64_t bytes);

/// Error(Unsupported) "<what> needs N bytes, more than the memory budget of M
/// (--max-memory)" when `bytes` is over the budget.
void checkMemoryBudget(uint64_t bytes, const std::string &what);

/// Parses a --max-memory value: BYTES or BYTES with a K, M, G or T suffix
/// (powers of 1024). Error(Usage) naming `option` on anything else, 0, or a
/// value past 1 TiB.
uint64_t parseMemorySize(const std::string &text, const std::string &option);

} // namespace bundlefit
