# BUNDLEFIT_FUZZ=ON builds the libFuzzer targets in fuzz/ (see fuzz/README.md).
# Use a separate build directory configured with clang-16:
#   CC=clang-16 CXX=clang++-16 cmake -S . -B build-fuzz -G Ninja -DBUNDLEFIT_FUZZ=ON \
#     -DBUNDLEFIT_BUILD_TESTS=OFF -DBUNDLEFIT_BUILD_BENCH=OFF
# Every library is then compiled with coverage instrumentation for libFuzzer
# and AddressSanitizer + UndefinedBehaviorSanitizer, so a bug inside a parser
# is caught where it happens, not only when it reaches the fuzz target.
option(BUNDLEFIT_FUZZ "Build the libFuzzer targets in fuzz/ (needs clang)" OFF)
if(BUNDLEFIT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "BUNDLEFIT_FUZZ needs clang (CC=clang-16 CXX=clang++-16), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  set(BUNDLEFIT_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
      -fno-omit-frame-pointer)
  add_compile_options(-fsanitize=fuzzer-no-link ${BUNDLEFIT_SANITIZE_FLAGS} -g)
  add_link_options(${BUNDLEFIT_SANITIZE_FLAGS})
  add_subdirectory(${PROJECT_SOURCE_DIR}/fuzz ${PROJECT_BINARY_DIR}/fuzz)
endif()
