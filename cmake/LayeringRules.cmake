# The layers the build enforces (tests/project: build_layering). For each
# library, the bundlefit libraries it may link directly, and the outside
# libraries it may link. Data flows importer -> IR -> passes -> planner ->
# codegen -> bundle; reports and the device database read what the planner
# produced and never reach code generation. docs/architecture.md draws this
# table; change both together.
#
# A library may link only what its list names. Tighten by deleting names;
# loosen only with a reason in the comment beside the name.

set(layer_planner "")                       # no ONNX, no LLVM, no files: alone
set(layer_planner_formats planner)       # Glow traces, MiniMalloc CSV
set(layer_support "")
set(layer_kernel_abi "")                 # the C kernels' enums and parameters (header only)
set(layer_ir support)
# Every operator's definition: shape inference, MACs, traits (src/ops).
set(layer_ops ir support kernel_abi)
set(layer_int8 ops ir support)           # int8 kernel arguments, CMSIS-NN layouts and sizes
set(layer_interp ops ir)
set(layer_onnx ir ops)
set(layer_passes ops ir)                 # constant folding runs the ops' reference kernels
set(layer_quant ops ir interp int8)
set(layer_schedule ops ir planner)
set(layer_codegen ops ir schedule support int8 kernel_abi)
# device_db runs no passes (issue 14): it summarizes the plan the driver
# made. int8: the CMSIS-NN *_get_buffer_size formulas (kernel scratch per
# variant).
set(layer_device ops schedule planner support int8)
# `fit --verify-link` builds firmware from plain regions and sizes that the
# driver fills from the device (driver/PartLink.h): bundle never links device.
set(layer_bundle schedule interp support)
set(layer_reports ops schedule device)
# The one pipeline (src/driver): load, passes, quantize, memory-opt, plan,
# codegen, bundle, and the sizing of builds for a part on top of it.
# interp: `run` (ModelRun.h) reads and writes .npy and compares the bundle's
# outputs with the reference interpreter's, for the CLI and Python alike.
set(layer_driver onnx passes schedule reports codegen bundle device quant int8 interp)
# `import bundlefit` (python/): the driver only, like a command.
set(layer_python driver)
set(layer_cli driver onnx passes schedule reports planner_formats codegen bundle device quant)

# Outside libraries, per library (regular expressions on the link item).
set(external_planner "^Threads::Threads$")   # deep exact-search sections run on a big-stack thread
set(external_planner_formats "")
set(external_support "")
set(external_kernel_abi "")
set(external_ir "")
set(external_ops "")
set(external_int8 "")
set(external_interp "")
set(external_onnx "^onnx_proto$" "^protobuf::")
set(external_passes "")
set(external_quant "^yaml-cpp")
set(external_schedule "")
set(external_codegen "^LLVM")
set(external_device "^nlohmann_json::")
set(external_bundle "")
set(external_reports "^nlohmann_json::")
set(external_driver "^nlohmann_json::")   # no CLI11: the command line is src/cli's
set(external_cli "^CLI11::" "^nlohmann_json::")
set(external_python "^pybind11::" "^Python3::Module$")

# Never reached, directly or through another library: the promises the
# layering exists to keep.
set(never_planner onnx codegen ir support "LLVM" "onnx_proto" "protobuf")
set(never_device codegen "LLVM")
set(never_reports codegen "LLVM")
set(never_bundle device)             # firmware from plain structs (driver/PartLink.h)
set(never_schedule codegen onnx "LLVM")
set(never_ir ops codegen onnx schedule "LLVM")
set(never_ops codegen onnx schedule interp "LLVM")
