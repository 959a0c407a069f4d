#include "errors.hpp"

#include "deadbolt/error.hpp"

namespace deadbolt::python {

namespace {

// The package's class for ec (deadbolt/errors.py), in ErrorClass's order (so that
// `except deadbolt.NotAcquired` works).
const char* class_for(std::error_code ec) {
    static constexpr const char* kNames[] = {
        "NotAcquired",     "LockLost",    "Cancelled", "UsageError",
        "ConnectionError", "ServerError", "LockError", "Error"};
    return kNames[static_cast<int>(class_of(ec))];
}

}  // namespace

py::object exception_for(std::error_code ec, const std::string& why) {
    auto errors = py::module_::import("deadbolt.errors");
    auto name = code_name(ec);
    return errors.attr(class_for(ec))(
        py::str(why), name.empty() ? py::str(ec.message()) : py::str(name.data(), name.size()));
}

void register_errors(py::module_& m) {
    // The package's Error.retryable asks here: one list of retryable codes, is_retryable's.
    m.def("retryable", [](const std::string& name) {
        for (int v = 1;; ++v) {
            std::error_code ec(v, category());
            auto n = code_name(ec);
            if (n.empty()) return false;
            if (n == name) return is_retryable(ec);
        }
    });
    // pybind11's translator is a function pointer taking the pointer by value.
    // NOLINTNEXTLINE(performance-unnecessary-value-param)
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Error& e) {
            auto exc = exception_for(e.code(), e.what());
            PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
        }
    });
}

}  // namespace deadbolt::python
