//===- PrintPerfectPacking.cpp - The C++ generator's problem as CSV -------===//
//
// Prints perfectPackingProblem(N, FAMILY, SEED) the way
// docs/studies/exact_fill.py's `csv` mode prints its port of the generator
// (id,lower,upper,size; the row's index as the id), so that
// same_generator.sh can compare the two byte for byte: the study's figures
// are about the benchmark's instances only while they are the same.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/formats/PerfectPacking.h"

#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  namespace bf = bundlefit::planner::formats;
  bf::PackingFamily family;
  if (argc != 4 || !bf::packingFamilyFromString(argv[2], family)) {
    std::fprintf(stderr,
                 "usage: %s N FAMILY SEED (FAMILY: uniform, heavy-tailed, power-of-two, "
                 "long-lived)\n",
                 argv[0]);
    return 2;
  }
  bundlefit::planner::Problem p =
      bf::perfectPackingProblem(std::atoi(argv[1]), family, std::strtoull(argv[3], nullptr, 10));
  std::printf("id,lower,upper,size\n");
  for (size_t k = 0; k < p.buffers.size(); ++k)
    std::printf("%zu,%llu,%llu,%llu\n", k, (unsigned long long)p.buffers[k].first,
                (unsigned long long)p.buffers[k].last + 1, (unsigned long long)p.buffers[k].size);
  return 0;
}
