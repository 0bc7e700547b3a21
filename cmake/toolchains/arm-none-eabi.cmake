# Cross-compiling firmware for a Cortex-M core with the Arm GNU toolchain
# (Debian: gcc-arm-none-eabi, libnewlib-arm-none-eabi).
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=<prefix>/lib/cmake/bundlefit/toolchains/arm-none-eabi.cmake \
#         [-DBUNDLEFIT_ARM_CPU=cortex-m7] ...
#
# BUNDLEFIT_ARM_CPU picks -mcpu and the FPU; use the same core as the
# bundle's TARGET in bundlefit_add_bundle.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# No host runtime to link a test program against.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

if(NOT BUNDLEFIT_ARM_CPU)
  set(BUNDLEFIT_ARM_CPU cortex-m7)
endif()
set(BUNDLEFIT_ARM_CPU ${BUNDLEFIT_ARM_CPU} CACHE STRING "Cortex-M core (cortex-m7, cortex-m4, cortex-m33, cortex-m0plus)")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES BUNDLEFIT_ARM_CPU)

# The same floating-point ABI as the bundles bundlefit generates for these
# targets (src/codegen/Target.cpp): hard float with the core's single-precision FPU.
if(BUNDLEFIT_ARM_CPU STREQUAL "cortex-m7" OR BUNDLEFIT_ARM_CPU STREQUAL "cortex-m33")
  set(_bundlefit_fpu "-mfloat-abi=hard -mfpu=fpv5-sp-d16")
elseif(BUNDLEFIT_ARM_CPU STREQUAL "cortex-m4")
  set(_bundlefit_fpu "-mfloat-abi=hard -mfpu=fpv4-sp-d16")
else()
  set(_bundlefit_fpu "-mfloat-abi=soft")
endif()
set(CMAKE_C_FLAGS_INIT "-mcpu=${BUNDLEFIT_ARM_CPU} -mthumb ${_bundlefit_fpu}")
set(CMAKE_CXX_FLAGS_INIT "-mcpu=${BUNDLEFIT_ARM_CPU} -mthumb ${_bundlefit_fpu}")
set(CMAKE_ASM_FLAGS_INIT "-mcpu=${BUNDLEFIT_ARM_CPU} -mthumb ${_bundlefit_fpu}")

# Libraries and headers from the toolchain; programs and CMake packages (bundlefit
# itself runs on the host) from anywhere.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
