# Every dependency comes from a Debian 12 package (scripts/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(doctest REQUIRED)
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED CONFIG)     # libonnx-dev: generated onnx-ml protobuf headers + onnx_proto
find_package(Boost REQUIRED)           # header-only Boost.Graph
find_package(Python3 REQUIRED COMPONENTS Interpreter)
