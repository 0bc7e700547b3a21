#include "bundlefit/support/MemoryBudget.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"
#include "bundlefit/support/OptionChecks.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

namespace bundlefit {

namespace {

uint64_t physicalRam() {
  long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

uint64_t resourceLimit(int resource) {
  struct rlimit limit;
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return 0;
  return uint64_t(limit.rlim_cur);
}

/// cgroup v2's memory.max for this process's group ("max": none).
uint64_t cgroupLimit() {
  std::ifstream groups("/proc/self/cgroup");
  std::string line;
  while (std::getline(groups, line)) {
    if (line.rfind("0::", 0) != 0)
      continue;
    std::ifstream max("/sys/fs/cgroup" + line.substr(3) + "/memory.max");
    unsigned long long bytes = 0;
    if (max >> bytes)
      return bytes;
  }
  return 0;
}

uint64_t defaultBudget() {
  uint64_t smallest = 0;
  for (uint64_t limit :
       {physicalRam(), resourceLimit(RLIMIT_AS), resourceLimit(RLIMIT_DATA), cgroupLimit()})
    if (limit != 0 && (smallest == 0 || limit < smallest))
      smallest = limit;
  return smallest ? smallest / 2 : uint64_t(4) << 30; // 4 GiB when nothing is known
}

std::atomic<uint64_t> &budget() {
  static std::atomic<uint64_t> bytes{defaultBudget()};
  return bytes;
}

} // namespace

uint64_t memoryBudget() { return budget().load(std::memory_order_relaxed); }

void setMemoryBudget(uint64_t bytes) { budget().store(bytes, std::memory_order_relaxed); }

void checkMemoryBudget(uint64_t bytes, const std::string &what) {
  const uint64_t limit = memoryBudget();
  if (bytes > limit)
    throw Error(ExitCode::Unsupported, what + " needs " + withThousands(bytes) +
                                           " bytes, more than the memory budget of " +
                                           withThousands(limit) + " (--max-memory)");
}

uint64_t parseMemorySize(const std::string &text, const std::string &option) {
  auto bad = [&] {
    return Error(ExitCode::Usage, option + " " + text +
                                      ": expected BYTES or a number with K, M, G or T (1024s), "
                                      "from 1 byte to 1 TiB");
  };
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    throw bad();
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  unsigned shift = 0;
  switch (*end) {
  case 'k':
  case 'K':
    shift = 10;
    ++end;
    break;
  case 'm':
  case 'M':
    shift = 20;
    ++end;
    break;
  case 'g':
  case 'G':
    shift = 30;
    ++end;
    break;
  case 't':
  case 'T':
    shift = 40;
    ++end;
    break;
  default:
    break;
  }
  if (*end != '\0' || errno == ERANGE || value == 0 || value > (kMaxByteCount >> shift))
    throw bad();
  return uint64_t(value) << shift;
}

} // namespace bundlefit
