//===- RunArrays.cpp - run()'s inputs and outputs as NumPy arrays ----------===//
#include "RunArrays.h"

#include "bundlefit/support/Error.h"

namespace py = pybind11;

namespace bundlefit::python {

namespace {

/// A str or os.PathLike is a .npy file, as on the command line.
bool isPath(const py::object &value) {
  return py::isinstance<py::str>(value) ||
         py::isinstance(value, py::module_::import("os").attr("PathLike"));
}

/// One array or path, for the input `name` ("" for the next one), named
/// `origin` in errors.
driver::RunInput inputOf(const py::object &value, const std::string &name,
                         const std::string &origin) {
  if (isPath(value))
    return driver::npyFileInput(py::str(py::module_::import("os").attr("fspath")(value)), name);
  py::module_ np = py::module_::import("numpy");
  // .npy is C order and little-endian; numpy.save keeps whatever the array is.
  py::object array = np.attr("ascontiguousarray")(value);
  py::object dtype = array.attr("dtype");
  if (dtype.attr("byteorder").cast<std::string>() == ">")
    array = array.attr("astype")(dtype.attr("newbyteorder")("<"));
  py::object buffer = py::module_::import("io").attr("BytesIO")();
  np.attr("save")(buffer, array, py::arg("allow_pickle") = false);
  return driver::npyBytesInput(buffer.attr("getvalue")().cast<std::string>(), origin, name);
}

} // namespace

std::vector<driver::RunInput> runInputsOf(const py::object &inputs) {
  std::vector<driver::RunInput> result;
  if (py::isinstance<py::dict>(inputs)) {
    for (auto [key, value] : inputs.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key))
        throw Error(ExitCode::Usage, "inputs: the keys name the model's inputs (str), got " +
                                         py::repr(key).cast<std::string>());
      std::string name = key.cast<std::string>();
      result.push_back(
          inputOf(py::reinterpret_borrow<py::object>(value), name, "inputs['" + name + "']"));
    }
  } else if (py::isinstance<py::list>(inputs) || py::isinstance<py::tuple>(inputs)) {
    size_t index = 0;
    for (py::handle value : inputs)
      result.push_back(inputOf(py::reinterpret_borrow<py::object>(value), "",
                               "inputs[" + std::to_string(index++) + "]"));
  } else {
    result.push_back(inputOf(inputs, "", "inputs"));
  }
  return result;
}

py::dict outputArrays(const driver::ModelRun &run) {
  py::module_ np = py::module_::import("numpy");
  py::object bytesIO = py::module_::import("io").attr("BytesIO");
  py::dict arrays;
  for (const driver::RunOutput &output : run.outputs)
    arrays[py::str(output.name)] =
        np.attr("load")(bytesIO(py::bytes(driver::npyBytes(output.tensor))));
  return arrays;
}

} // namespace bundlefit::python
