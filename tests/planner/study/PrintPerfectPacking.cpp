//===- PrintPerfectPacking.cpp - The C++ generator's problem as CSV -------===//
//
// Prints perfectPackingProblem(N, FAMILY, SEED) the way
// docs/studies/exact_fill.py's `csv` mode prints its port of the generator
// (id,lower,upper,size; the row's index as the id), so that
// same_generator.sh can compare the two byte for byte: the study's figures
// are about the benchmark's instances only while they are the same.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/formats/MiniMallocCsv.h"
#include "bundlefit/planner/formats/PerfectPacking.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

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
  bf::writeMiniMallocProblemCsv(std::cout, p); // Buffer::id is the row's index here.
  return std::cout ? 0 : 1;
}
