// deadbolt's errors as the Python package's exception classes (deadbolt/errors.py).
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <system_error>

namespace deadbolt::python {

namespace py = pybind11;

/// The Python exception (an instance of deadbolt.errors' class for ec) carrying why and the
/// code's name. Call with the GIL held; throws py::error_already_set if the package is broken.
py::object exception_for(std::error_code ec, const std::string& why);

/// Makes every deadbolt::Error thrown through the module raise exception_for's class, and
/// defines retryable(code name), what Error.retryable reports.
void register_errors(py::module_& m);

}  // namespace deadbolt::python
