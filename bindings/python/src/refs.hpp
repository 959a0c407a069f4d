// Python objects that deadbolt's threads hold, and the binding's callback thread: those
// threads (the event loop, the renewer) never wait for the GIL themselves.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <memory>

namespace deadbolt::python {

namespace py = pybind11;

/// A Python object that any thread may copy (as a Ref) and drop without holding the GIL: the
/// last Ref takes the GIL to let go of it, or leaks it once the interpreter is finalizing.
class PyRef {
  public:
    explicit PyRef(py::object o) : obj_(std::move(o)) {}
    PyRef(const PyRef&) = delete;
    PyRef& operator=(const PyRef&) = delete;
    ~PyRef();
    /// The object; call only with the GIL held.
    const py::object& get() const noexcept { return obj_; }

  private:
    py::object obj_;
};
using Ref = std::shared_ptr<const PyRef>;

/// Holds o for other threads. Call with the GIL held.
inline Ref hold(py::object o) {
    return std::make_shared<const PyRef>(std::move(o));
}

/// Runs fn with the GIL on the binding's callback thread, in the order posted; an exception
/// it raises is printed as unraisable. Dropped once shutdown() ran. Never throws.
void post(std::function<void()> fn) noexcept;

/// Runs what was posted, then stops the callback thread (the package calls it at exit, before
/// the interpreter finalizes). Call with the GIL held; never throws.
void shutdown() noexcept;

}  // namespace deadbolt::python
