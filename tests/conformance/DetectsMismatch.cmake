# The driver must report a wrong result: a test directory is assembled from
# node/test_relu's model and input and node/test_abs's expected output (same
# shape, other values); onnx_conformance must exit 1 and print a FAIL line.
# Usage: cmake -DDRIVER=<onnx_conformance> -DDATA=<data root> -DWORK=<dir> -P DetectsMismatch.cmake
if(NOT EXISTS "${DATA}/node/test_relu/model.onnx" OR NOT EXISTS "${DATA}/node/test_abs")
  # A script cannot exit 77 (cmake 3.25): ctest's SKIP_REGULAR_EXPRESSION reads this line.
  message("BUNDLEFIT_SKIP: no ONNX backend test data under ${DATA}")
  return()
endif()
set(test_dir "${WORK}/mismatch/test_relu_with_abs_output")
file(REMOVE_RECURSE "${WORK}/mismatch")
file(MAKE_DIRECTORY "${test_dir}/test_data_set_0")
file(COPY_FILE "${DATA}/node/test_relu/model.onnx" "${test_dir}/model.onnx")
file(COPY_FILE "${DATA}/node/test_relu/test_data_set_0/input_0.pb"
     "${test_dir}/test_data_set_0/input_0.pb")
file(COPY_FILE "${DATA}/node/test_abs/test_data_set_0/output_0.pb"
     "${test_dir}/test_data_set_0/output_0.pb")
execute_process(COMMAND "${DRIVER}" "${WORK}/mismatch" RESULT_VARIABLE status
                OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(NOT status EQUAL 1 OR NOT output MATCHES "FAIL [^\n]*test_relu_with_abs_output: max abs diff"
   OR NOT output MATCHES "\n0 passed, 1 failed, 0 skipped\n")
  message(FATAL_ERROR "onnx_conformance did not report the mismatch (exit ${status}):\n${output}")
endif()
