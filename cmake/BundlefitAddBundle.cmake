# bundlefit_add_bundle: compile an ONNX model into a bundle at build time and
# add it to a firmware target. Loaded by bundlefitConfig.cmake
# (find_package(bundlefit CONFIG)); it can also be include()d from a build tree
# after setting BUNDLEFIT_EXECUTABLE.
#
#   bundlefit_add_bundle(<target> MODEL m.onnx
#                        [NETWORK_NAME n] [TARGET cortex-m7] [DEVICE rt1060]
#                        [WEIGHTS flash|ram|auto|placement.json]
#                        [PROFILE p.yaml] [USE_CMSIS] [CMSIS_NN_DIR dir]
#                        [MEMORY_OPT 0|1|2] [OUTPUT_DIR dir] [NO_EMBED_WEIGHTS]
#                        [RESERVE_RAM bytes|pct%] [RESERVE_FLASH bytes|pct%]
#                        [APP_RAM bytes] [APP_FLASH bytes]
#                        [OPTIONS ...])
#
# At build time it runs `bundlefit compile` (re-run when the model or profile
# changes) and
#   - adds <net>.o to <target>'s sources and the bundle directory to its
#     include path (#include "<net>.h"),
#   - unless NO_EMBED_WEIGHTS: adds a generated <net>_weights.c that embeds
#     <net>.weights.bin (.incbin, 64-aligned, section .rodata.<net>_weights)
#     as `const uint8_t <net>_constant_weight[]`, declared in
#     <net>_weights.h,
#   - with DEVICE: runs `bundlefit fit --brief` first, for the placement the
#     build makes: one line when the model fits, the whole fit report and a
#     failed build when it does not (exit 3); the headroom arguments become
#     fit's --reserve-ram, --reserve-flash, --app-ram and --app-flash (room
#     kept for the application, or its own footprint in place of the part's
#     SDK baseline). Without WEIGHTS the bundle keeps Glow's API and its
#     weights are embedded in Flash (below), so the check is `--weights flash`,
#   - with WEIGHTS (needs DEVICE): the bundle is compiled with `--device DEVICE
#     --weights WEIGHTS` (and the headroom arguments), as `fit` places it:
#     <net>_weights.c (each region's weights in its own section, the copy
#     table) is added to <target>'s sources in place of the embedded weights,
#     and <NET>_WEIGHTS_LD names the linker-script fragment to INCLUDE; the
#     firmware calls <net>_copy_weights() at start-up and <net>_run(),
#   - warns at configure time when TARGET is not the core of DEVICE that runs
#     bundles (TARGET cortex-m7 with DEVICE lpc55s69, a Cortex-M33 part),
#   - links the C math library (libm: float Log, Sin, Erf, Mish... call logf, sinf, erff...),
#   - sets, in the caller's scope, <NET>_BUNDLE_DIR, <NET>_WEIGHTS_BIN,
#     <NET>_WEIGHTS_TXT and with WEIGHTS <NET>_WEIGHTS_LD (<NET> = network name
#     in upper case), and the same values as properties BUNDLEFIT_<NET>_... on
#     <target>.
# PROFILE becomes --load-profile, USE_CMSIS --use-cmsis, CMSIS_NN_DIR
# --cmsis-nn-dir and MEMORY_OPT --memory-opt (for fit too, so the verdict is
# about the bundle built); OPTIONS are passed to `bundlefit compile` as they are.
# USE_CMSIS also links CMSIS-NN into <target>: CMSIS_NN_DIR (or
# BUNDLEFIT_CMSIS_NN_DIR) names a target, a CMSIS-NN source checkout (built
# with add_subdirectory) or a directory holding libcmsis-nn.a; without it, the
# project's `cmsis-nn` target.

include_guard(GLOBAL)

# Warns when TARGET differs from the core of DEVICE that runs the bundle: the
# fit verdict and the predicted time are for that core, the code for TARGET.
function(_bundlefit_check_device_core target device core_target)
  set(env)
  if(BUNDLEFIT_DEVICE_DB)
    set(env "${CMAKE_COMMAND}" -E env "BUNDLEFIT_DEVICE_DB=${BUNDLEFIT_DEVICE_DB}")
  endif()
  execute_process(COMMAND ${env} "${BUNDLEFIT_EXECUTABLE}" -q devices --json
                  OUTPUT_VARIABLE devices RESULT_VARIABLE status ERROR_QUIET)
  if(NOT status EQUAL 0)
    return()
  endif()
  string(JSON count ERROR_VARIABLE error LENGTH "${devices}" devices)
  if(error OR count EQUAL 0)
    return()
  endif()
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON id GET "${devices}" devices ${i} id)
    string(JSON aliases GET "${devices}" devices ${i} aliases)
    string(FIND "${aliases}" "\"${device}\"" alias_at)
    if(NOT id STREQUAL device AND alias_at EQUAL -1)
      continue()
    endif()
    string(JSON cores LENGTH "${devices}" devices ${i} cores)
    math(EXPR last_core "${cores} - 1")
    foreach(c RANGE ${last_core})
      string(JSON runs GET "${devices}" devices ${i} cores ${c} runs_bundle)
      string(JSON type GET "${devices}" devices ${i} cores ${c} type)
      if(runs AND NOT type STREQUAL core_target)
        message(WARNING "bundlefit_add_bundle(${target}): TARGET ${core_target} but DEVICE "
                        "${device} runs bundles on a ${type}: the code is built for "
                        "${core_target}, the fit and the predicted time are for ${type} "
                        "(set TARGET ${type})")
      endif()
    endforeach()
    return()
  endforeach()
endfunction()

# The default network name is what `bundlefit compile` picks: the model's file
# name without its last extension, with every character outside [A-Za-z0-9_]
# replaced by '_' and a '_' in front of a leading digit (support/Names.cpp).
function(_bundlefit_network_name model out)
  get_filename_component(stem "${model}" NAME_WLE)
  string(REGEX REPLACE "[^A-Za-z0-9_]" "_" stem "${stem}")
  if(stem STREQUAL "" OR stem MATCHES "^[0-9]")
    set(stem "_${stem}")
  endif()
  set(${out} "${stem}" PARENT_SCOPE)
endfunction()

function(bundlefit_add_bundle target)
  set(flags USE_CMSIS NO_EMBED_WEIGHTS)
  set(one MODEL NETWORK_NAME TARGET DEVICE WEIGHTS PROFILE CMSIS_NN_DIR OUTPUT_DIR MEMORY_OPT
          RESERVE_RAM RESERVE_FLASH APP_RAM APP_FLASH)
  set(multi OPTIONS)
  cmake_parse_arguments(PARSE_ARGV 1 arg "${flags}" "${one}" "${multi}")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "bundlefit_add_bundle(${target}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "bundlefit_add_bundle(${target}): no such target")
  endif()
  if(NOT arg_MODEL)
    message(FATAL_ERROR "bundlefit_add_bundle(${target}): MODEL is required")
  endif()
  if(NOT BUNDLEFIT_EXECUTABLE)
    message(FATAL_ERROR "bundlefit_add_bundle(${target}): BUNDLEFIT_EXECUTABLE is not set "
                        "(use find_package(bundlefit CONFIG))")
  endif()

  get_filename_component(model "${arg_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(arg_NETWORK_NAME)
    set(net "${arg_NETWORK_NAME}")
    if(NOT net MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "bundlefit_add_bundle(${target}): NETWORK_NAME '${net}' is not a C identifier")
    endif()
  else()
    _bundlefit_network_name("${model}" net)
  endif()
  string(TOUPPER "${net}" NET)
  if(arg_OUTPUT_DIR)
    get_filename_component(dir "${arg_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/bundlefit/${net}")
  endif()
  if(NOT arg_TARGET)
    set(arg_TARGET cortex-m7)
  endif()

  set(depends "${model}")
  set(compile_args -q compile "${model}" -o "${dir}" --network-name "${net}" --target "${arg_TARGET}")
  set(variant float)
  set(fit_args)
  if(arg_PROFILE)
    get_filename_component(profile "${arg_PROFILE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND compile_args --load-profile "${profile}")
    set(fit_args --load-profile "${profile}")
    list(APPEND depends "${profile}")
    set(variant int8)
  endif()
  if(DEFINED arg_MEMORY_OPT)
    if(NOT arg_MEMORY_OPT MATCHES "^[012]$")
      message(FATAL_ERROR "bundlefit_add_bundle(${target}): MEMORY_OPT must be 0, 1 or 2, not '${arg_MEMORY_OPT}'")
    endif()
    list(APPEND compile_args --memory-opt ${arg_MEMORY_OPT})
    list(APPEND fit_args --memory-opt ${arg_MEMORY_OPT})
  endif()
  # The placement the build makes: Glow's one constantWeight embedded in
  # Flash, or with WEIGHTS the weights placed for DEVICE as `fit` places them.
  set(placement_args)
  if(arg_WEIGHTS)
    if(NOT arg_DEVICE)
      message(FATAL_ERROR "bundlefit_add_bundle(${target}): WEIGHTS needs DEVICE (the part the weights are placed for)")
    endif()
    set(weights "${arg_WEIGHTS}")
    if(NOT weights MATCHES "^(flash|ram|auto)$")
      get_filename_component(weights "${weights}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND depends "${weights}")
    endif()
    set(placement_args --device "${arg_DEVICE}" --weights "${weights}")
    list(APPEND fit_args --weights "${weights}")
  elseif(arg_DEVICE)
    list(APPEND fit_args --weights flash)
  endif()
  foreach(headroom RESERVE_RAM RESERVE_FLASH APP_RAM APP_FLASH)
    if(DEFINED arg_${headroom})
      if(NOT arg_DEVICE)
        message(FATAL_ERROR "bundlefit_add_bundle(${target}): ${headroom} needs DEVICE (it is a fit option)")
      endif()
      string(TOLOWER "${headroom}" option)
      string(REPLACE "_" "-" option "${option}")
      list(APPEND fit_args --${option} "${arg_${headroom}}")
      if(arg_WEIGHTS)
        list(APPEND placement_args --${option} "${arg_${headroom}}")
      endif()
    endif()
  endforeach()
  list(APPEND compile_args ${placement_args})
  if(arg_USE_CMSIS)
    if(NOT arg_PROFILE)
      message(FATAL_ERROR "bundlefit_add_bundle(${target}): USE_CMSIS needs PROFILE (CMSIS-NN kernels are int8)")
    endif()
    list(APPEND compile_args --use-cmsis)
    set(variant int8-cmsis)
  endif()
  # CMSIS_NN_DIR (or the cache variable BUNDLEFIT_CMSIS_NN_DIR): the user's
  # CMSIS-NN, one of
  #  - a target name (the project's own CMSIS-NN library target): linked;
  #  - a CMSIS-NN source checkout (Include/, Source/, CMakeLists.txt; CMSIS-NN
  #    installs no library): added with add_subdirectory, so its `cmsis-nn`
  #    target is built with the firmware's toolchain and flags, and linked;
  #  - a build or install directory holding libcmsis-nn.a (top, lib/, build/,
  #    build/lib/, build/Source/), its Include/ on <target>'s include path.
  # Without it, a `cmsis-nn` target of the project is linked.
  if(NOT arg_CMSIS_NN_DIR AND BUNDLEFIT_CMSIS_NN_DIR)
    set(arg_CMSIS_NN_DIR "${BUNDLEFIT_CMSIS_NN_DIR}")
  endif()
  set(cmsis_target "")
  set(cmsis_dir "")
  if(arg_CMSIS_NN_DIR AND TARGET "${arg_CMSIS_NN_DIR}")
    set(cmsis_target "${arg_CMSIS_NN_DIR}")
  elseif(arg_CMSIS_NN_DIR)
    get_filename_component(cmsis_dir "${arg_CMSIS_NN_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND compile_args --cmsis-nn-dir "${cmsis_dir}")
  endif()
  if(arg_USE_CMSIS)
    if(cmsis_target)
      target_link_libraries(${target} PRIVATE ${cmsis_target})
    elseif(TARGET cmsis-nn)
      target_link_libraries(${target} PRIVATE cmsis-nn)
    elseif(cmsis_dir AND EXISTS "${cmsis_dir}/CMakeLists.txt" AND IS_DIRECTORY "${cmsis_dir}/Source"
           AND EXISTS "${cmsis_dir}/Include/arm_nnfunctions.h")
      add_subdirectory("${cmsis_dir}" "${CMAKE_BINARY_DIR}/bundlefit-cmsis-nn" EXCLUDE_FROM_ALL)
      target_link_libraries(${target} PRIVATE cmsis-nn)
    elseif(cmsis_dir)
      if(EXISTS "${cmsis_dir}/Include")
        target_include_directories(${target} PRIVATE "${cmsis_dir}/Include")
      endif()
      find_library(BUNDLEFIT_CMSIS_NN_LIBRARY_${net} NAMES cmsis-nn libcmsis-nn.a
                   PATHS "${cmsis_dir}" PATH_SUFFIXES lib build build/lib build/Source NO_DEFAULT_PATH)
      if(NOT BUNDLEFIT_CMSIS_NN_LIBRARY_${net})
        message(FATAL_ERROR "bundlefit_add_bundle(${target}): USE_CMSIS: ${cmsis_dir} is neither a "
                            "CMSIS-NN source checkout (Include/, Source/, CMakeLists.txt) nor holds "
                            "libcmsis-nn.a (top, lib/, build/); or name a cmsis-nn target")
      endif()
      target_link_libraries(${target} PRIVATE "${BUNDLEFIT_CMSIS_NN_LIBRARY_${net}}")
    else()
      message(FATAL_ERROR "bundlefit_add_bundle(${target}): USE_CMSIS needs CMSIS_NN_DIR, "
                          "BUNDLEFIT_CMSIS_NN_DIR or a cmsis-nn target to link the arm_* functions")
    endif()
  endif()
  list(APPEND compile_args ${arg_OPTIONS})

  # The installed tool finds its device database next to itself; a build-tree
  # tool uses the one compiled in.
  set(env)
  if(BUNDLEFIT_DEVICE_DB)
    set(env "${CMAKE_COMMAND}" -E env "BUNDLEFIT_DEVICE_DB=${BUNDLEFIT_DEVICE_DB}")
  endif()

  set(outputs "${dir}/${net}.o" "${dir}/${net}.h" "${dir}/${net}.weights.bin"
              "${dir}/${net}.weights.txt" "${dir}/${net}.memory.json")
  if(arg_WEIGHTS)
    list(APPEND outputs "${dir}/${net}_weights.c" "${dir}/${net}_weights.ld")
  endif()

  # DEVICE: the fit verdict gates the build. `bundlefit fit` exits 3 when the
  # model does not fit, which fails this step and so the build; its report
  # (which region overflows, what would make it fit) is in the build log.
  if(arg_DEVICE)
    _bundlefit_check_device_core(${target} "${arg_DEVICE}" "${arg_TARGET}")
    set(fit_stamp "${dir}.fit.stamp")
    add_custom_command(
      OUTPUT "${fit_stamp}"
      COMMAND ${env} "${BUNDLEFIT_EXECUTABLE}" -q fit "${model}" --device "${arg_DEVICE}"
              --variant ${variant} --brief ${fit_args}
      COMMAND "${CMAKE_COMMAND}" -E touch "${fit_stamp}"
      DEPENDS ${depends} "${BUNDLEFIT_EXECUTABLE}"
      COMMENT "bundlefit fit ${net} on ${arg_DEVICE}"
      VERBATIM)
    list(APPEND depends "${fit_stamp}")
  endif()

  # `bundlefit compile` writes all five files or none, so a failed step leaves
  # nothing that would look up to date.
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${env} "${BUNDLEFIT_EXECUTABLE}" ${compile_args}
    DEPENDS ${depends} "${BUNDLEFIT_EXECUTABLE}"
    COMMENT "bundlefit compile ${net} for ${arg_TARGET}"
    VERBATIM)

  set_source_files_properties("${dir}/${net}.o" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  target_sources(${target} PRIVATE "${dir}/${net}.o" "${dir}/${net}.h")
  target_include_directories(${target} PRIVATE "${dir}")
  # Float kernels call logf, erff, ...: the bundle needs the C math library.
  if(NOT MSVC)
    target_link_libraries(${target} PRIVATE m)
  endif()

  if(arg_WEIGHTS)
    # The placed weights: each region's section and the copy table, the
    # region files found by .incbin on the bundle directory (include path).
    set_source_files_properties("${dir}/${net}_weights.c" PROPERTIES GENERATED TRUE)
    target_sources(${target} PRIVATE "${dir}/${net}_weights.c")
    set(${NET}_WEIGHTS_LD "${dir}/${net}_weights.ld" PARENT_SCOPE)
    set_property(TARGET ${target} PROPERTY BUNDLEFIT_${NET}_WEIGHTS_LD "${dir}/${net}_weights.ld")
  elseif(NOT arg_NO_EMBED_WEIGHTS)
    # The weights go into the image through the assembler (.incbin), which is
    # much faster than compiling the 6x larger weights.txt initialiser.
    set(weights_c "${dir}_weights/${net}_weights.c")
    set(weights_h "${dir}_weights/${net}_weights.h")
    file(CONFIGURE OUTPUT "${weights_h}" CONTENT
"/* Generated by bundlefit_add_bundle: ${net}'s constant weights, embedded. */
#ifndef ${NET}_WEIGHTS_H
#define ${NET}_WEIGHTS_H
#include <stdint.h>
#ifdef __cplusplus
extern \"C\" {
#endif
/* ${NET}_CONSTANT_MEM_SIZE bytes (${net}.h), 64-aligned: pass as constantWeight. */
extern const uint8_t ${net}_constant_weight[];
#ifdef __cplusplus
}
#endif
#endif
")
    file(CONFIGURE OUTPUT "${weights_c}" CONTENT
"/* Generated by bundlefit_add_bundle: ${net}.weights.bin in the image. */
#include \"${net}_weights.h\"
__asm__(\".pushsection .rodata.${net}_weights,\\\"a\\\",%progbits\\n\"
        \".balign 64\\n\"
        \".global ${net}_constant_weight\\n\"
        \".type ${net}_constant_weight, %object\\n\"
        \"${net}_constant_weight:\\n\"
        \".incbin \\\"${dir}/${net}.weights.bin\\\"\\n\"
        \".size ${net}_constant_weight, . - ${net}_constant_weight\\n\"
        \".popsection\\n\");
")
    set_source_files_properties("${weights_c}" PROPERTIES OBJECT_DEPENDS "${dir}/${net}.weights.bin")
    target_sources(${target} PRIVATE "${weights_c}")
    target_include_directories(${target} PRIVATE "${dir}_weights")
  endif()

  set(${NET}_BUNDLE_DIR "${dir}" PARENT_SCOPE)
  set(${NET}_WEIGHTS_BIN "${dir}/${net}.weights.bin" PARENT_SCOPE)
  set(${NET}_WEIGHTS_TXT "${dir}/${net}.weights.txt" PARENT_SCOPE)
  set_property(TARGET ${target} PROPERTY BUNDLEFIT_${NET}_BUNDLE_DIR "${dir}")
  set_property(TARGET ${target} PROPERTY BUNDLEFIT_${NET}_WEIGHTS_BIN "${dir}/${net}.weights.bin")
  set_property(TARGET ${target} PROPERTY BUNDLEFIT_${NET}_WEIGHTS_TXT "${dir}/${net}.weights.txt")
endfunction()
