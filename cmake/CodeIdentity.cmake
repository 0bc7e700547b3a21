# The identity of the code that sizes bundles: a SHA-256 over the static
# libraries below the driver (the pipeline, code generation and the kernels'
# bitcode they embed), written to ${CMAKE_BINARY_DIR}/generated/CodeIdentity.h
# as BUNDLEFIT_CODE_IDENTITY. The `bundlefit` tool and the Python module both
# give it to the driver (setCodeIdentity, VariantBuild.h), so the code sizes
# one caches the other reads: `bundlefit.fit()` and `bundlefit fit` answer
# from the same cache. Any rebuilt library changes it, so no stale size is
# ever reused.
set(BUNDLEFIT_CODE_IDENTITY_HEADER ${CMAKE_BINARY_DIR}/generated/CodeIdentity.h)

# The bundlefit_* static libraries `target` links, itself included.
function(bundlefit_collect_libraries target out)
  set(found ${${out}})
  if(target IN_LIST found)
    return()
  endif()
  list(APPEND found ${target})
  get_target_property(links ${target} LINK_LIBRARIES)
  foreach(link IN LISTS links)
    string(REGEX REPLACE "^\\$<[A-Z_]+:(.*)>$" "\\1" link "${link}")
    if(link MATCHES "^bundlefit_" AND TARGET ${link})
      bundlefit_collect_libraries(${link} found)
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

function(bundlefit_add_code_identity)
  set(libraries "")
  bundlefit_collect_libraries(bundlefit_driver libraries)
  list(SORT libraries)
  set(files "")
  foreach(library IN LISTS libraries)
    # Header-only libraries (bundlefit_kernel_abi) have no file: what they
    # declare is compiled into the libraries that include them.
    get_target_property(type ${library} TYPE)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      list(APPEND files $<TARGET_FILE:${library}>)
    endif()
  endforeach()
  add_custom_command(
    OUTPUT ${BUNDLEFIT_CODE_IDENTITY_HEADER}
    COMMAND ${CMAKE_COMMAND} "-DFILES=${files}" -DOUT=${BUNDLEFIT_CODE_IDENTITY_HEADER}
            -P ${PROJECT_SOURCE_DIR}/cmake/WriteCodeIdentity.cmake
    DEPENDS ${libraries} ${PROJECT_SOURCE_DIR}/cmake/WriteCodeIdentity.cmake
    COMMENT "Code identity of the bundle-sizing libraries"
    # No COMMAND_EXPAND_LISTS: it split "-DFILES=a;b;..." into separate
    # arguments, so FILES held the first library alone and a change to the
    # kernels or code generation kept the identity (and the stale cached
    # code sizes). VERBATIM passes the list as one argument.
    VERBATIM)
  add_custom_target(bundlefit_code_identity DEPENDS ${BUNDLEFIT_CODE_IDENTITY_HEADER})
  # The list the identity must cover, for tests/project's check that the
  # header hashes every library (cmake/CheckCodeIdentity.cmake).
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/generated/CodeIdentityFiles.txt
       CONTENT "$<JOIN:${files},\n>\n")
endfunction()

# Lets `target` include "CodeIdentity.h", rebuilt after the libraries.
function(bundlefit_use_code_identity target)
  add_dependencies(${target} bundlefit_code_identity)
  target_include_directories(${target} PRIVATE ${CMAKE_BINARY_DIR}/generated)
endfunction()
