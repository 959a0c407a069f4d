// deadbolt._deadbolt: the native half of the Python package (deadbolt/__init__.py is the
// other): a thin layer over the C++ library, no second implementation of any algorithm.
#include <pybind11/pybind11.h>

#include "completions.hpp"
#include "errors.hpp"
#include "lease.hpp"
#include "refs.hpp"

namespace deadbolt::python {
void define_client(py::module_& m);
void define_primitives(py::module_& m);
}  // namespace deadbolt::python

PYBIND11_MODULE(_deadbolt, m) {
    namespace dp = deadbolt::python;
    m.doc() = "deadbolt's native module; use the deadbolt package";
    dp::register_errors(m);
    dp::define_lease(m);
    dp::define_completions(m);
    dp::define_client(m);
    dp::define_primitives(m);
    m.def("_shutdown", &dp::shutdown, "Stops the callback thread (the package calls it at exit).");
}
