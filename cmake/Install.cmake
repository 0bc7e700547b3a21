# Install rules: the tools, the device database (device_db/CMakeLists.txt
# installs it) and the CMake package that firmware projects find with
# find_package(bundlefit CONFIG):
#   <prefix>/bin/bundlefit, model-compiler, model-profiler, image-classifier
#   <prefix>/share/bundlefit/examples/  the example firmware (cortex-m7-lenet)
#   <prefix>/lib/cmake/bundlefit/  bundlefitConfig.cmake, ...ConfigVersion.cmake,
#                                  bundlefitTargets.cmake, BundlefitAddBundle.cmake,
#                                  toolchains/arm-none-eabi.cmake
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BUNDLEFIT_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/bundlefit)
set(BUNDLEFIT_DEVICE_DB_INSTALL_REL ${CMAKE_INSTALL_DATADIR}/bundlefit/device_db)

install(TARGETS bundlefit model-compiler model-profiler image-classifier EXPORT bundlefitTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT bundlefitTargets NAMESPACE bundlefit:: DESTINATION ${BUNDLEFIT_CMAKE_INSTALL_DIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/bundlefitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/bundlefitConfig.cmake
  INSTALL_DESTINATION ${BUNDLEFIT_CMAKE_INSTALL_DIR}
  PATH_VARS BUNDLEFIT_DEVICE_DB_INSTALL_REL)
# The tool's options change between minor versions before 1.0.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/bundlefitConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion
  ARCH_INDEPENDENT) # host tools, used by cross builds for any target
install(FILES ${PROJECT_BINARY_DIR}/cmake/bundlefitConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/bundlefitConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/BundlefitAddBundle.cmake
        DESTINATION ${BUNDLEFIT_CMAKE_INSTALL_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/cmake/toolchains/arm-none-eabi.cmake
        DESTINATION ${BUNDLEFIT_CMAKE_INSTALL_DIR}/toolchains)
# A firmware project to start from, built by the tests the same way
# (README, "Using bundlefit from CMake").
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bundlefit/examples)
