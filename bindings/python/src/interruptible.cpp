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

void wait_interruptibly(std::mutex& m, std::condition_variable& cv,
                        const std::function<bool()>& done, const std::function<void()>& stop,
                        const std::function<void()>& abandon) {
    const bool main = on_main_thread();
    for (;;) {
        {
            py::gil_scoped_release nogil;
            std::unique_lock lk(m);
            if (!main) return cv.wait(lk, done);
            if (cv.wait_for(lk, std::chrono::milliseconds(50), done)) return;
        }
        if (PyErr_CheckSignals() != 0) {
            stop();
            {
                py::gil_scoped_release nogil;
                {
                    std::unique_lock lk(m);
                    cv.wait(lk, done);
                }
                abandon();
            }
            throw py::error_already_set();
        }
    }
}

}  // namespace deadbolt::python
