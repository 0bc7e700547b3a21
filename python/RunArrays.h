//===- RunArrays.h - run()'s inputs and outputs as NumPy arrays ------------===//
//
// run() takes what `bundlefit run --input` takes, and arrays: each array goes
// to the driver as the bytes numpy.save writes (so an array and the same
// array saved to a .npy file are read by the same code, with the same dtype
// rules and error messages), and each output comes back through numpy.load.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/driver/ModelRun.h"

#include <pybind11/pybind11.h>

#include <vector>

namespace bundlefit::python {

/// `inputs=`: one array or .npy path (a model with one input), a list or
/// tuple of them in the model's input order, or a dict from input name to
/// either. Needs the GIL.
std::vector<driver::RunInput> runInputsOf(const pybind11::object &inputs);

/// Output name -> numpy array, in the model's output order. Needs the GIL.
pybind11::dict outputArrays(const driver::ModelRun &run);

} // namespace bundlefit::python
