#include "interruptible.hpp"

namespace deadbolt::python {

namespace {

unsigned long main_thread_id() {
    // threading's idea of the main thread: where Python runs signal handlers.
    static const auto id = py::cast<unsigned long>(
        py::module_::import("threading").attr("main_thread")().attr("ident"));
    return id;
}

}  // namespace

bool on_main_thread() {
    return PyThread_get_thread_ident() == main_thread_id();
}

}  // namespace deadbolt::python
