# BUNDLEFIT_SANITIZE=ON compiles everything with AddressSanitizer and
# UndefinedBehaviorSanitizer (clang-16), for scripts/sanitizer-tests.sh: the
# fast unit tests built Debug, so the planner's plan-validity asserts and the
# kernels' bounds run under the sanitizers. The release build never sets it.
option(BUNDLEFIT_SANITIZE "Build with ASan + UBSan (needs clang)" OFF)
if(BUNDLEFIT_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "BUNDLEFIT_SANITIZE needs clang (CC=clang-16 CXX=clang++-16), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer -g
                      # doctest's CAPTURE/INFO of a structured binding: accepted
                      # by GCC in C++17, a C++20 extension to clang.
                      -Wno-c++20-extensions)
  add_link_options(-fsanitize=address,undefined)
endif()
