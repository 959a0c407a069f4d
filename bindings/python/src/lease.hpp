// The Python Lease: one holding, as deadbolt::Lease, released without blocking when dropped.
#pragma once

#include <pybind11/pybind11.h>

#include "deadbolt/lease.hpp"

namespace deadbolt::python {

namespace py = pybind11;

/// Owns one deadbolt::Lease. Dropping it (garbage collection) releases the holding in the
/// background, never holding up the interpreter.
struct PyLease {
    explicit PyLease(Lease l) : lease(std::move(l)) {}
    PyLease(const PyLease&) = delete;
    PyLease& operator=(const PyLease&) = delete;
    ~PyLease();
    Lease lease;
};

/// Defines deadbolt._deadbolt.Lease.
void define_lease(py::module_& m);

/// A name as Python shows it: str when it is UTF-8, else bytes.
py::object py_name(const std::string& name);

}  // namespace deadbolt::python
