# build/source-commit.txt: the git commit this build's sources are at
# (WriteSourceCommit.cmake), refreshed at every build. The benchmarks copy it
# into their results ("commit" in bench/results/*.json), so that
# scripts/check-readme-figures.py can tell a result older than the code it
# measures. Benchmark targets depend on bundlefit_source_commit.
set(BUNDLEFIT_SOURCE_COMMIT_FILE ${CMAKE_BINARY_DIR}/source-commit.txt)
add_custom_target(bundlefit_source_commit ALL
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DOUT=${BUNDLEFIT_SOURCE_COMMIT_FILE} -P ${PROJECT_SOURCE_DIR}/cmake/WriteSourceCommit.cmake
  BYPRODUCTS ${BUNDLEFIT_SOURCE_COMMIT_FILE}
  VERBATIM)
