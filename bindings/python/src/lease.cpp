#include "lease.hpp"

#include <pybind11/stl.h>

#include <chrono>
#include <cmath>

#include "completions.hpp"
#include "deadbolt/async.hpp"
#include "deadbolt/error.hpp"
#include "seconds.hpp"

namespace deadbolt::python {

namespace {

// A steady_clock instant as time.monotonic() shows it (both read CLOCK_MONOTONIC on Linux).
double monotonic(Lease::clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// A second Lease on l's holding, for an asynchronous release: l still shows the holding (its
// name, fence, lost) after the release, which marks the shared state released.
Lease sharing(Lease& l) {
    auto state = detail::take_state(l);
    l = detail::make_lease(state);
    return detail::make_lease(std::move(state));
}

// A lease on its way to the loop for its release: released in the background, never blocking
// whoever drops it, if it does not get there.
struct Releasing {
    explicit Releasing(Lease l) : lease(std::move(l)) {}
    Releasing(const Releasing&) = delete;
    Releasing& operator=(const Releasing&) = delete;
    ~Releasing() {
        if (lease.held()) detail::start_release(std::move(lease), [](std::error_code) {});
    }
    Lease lease;
};

}  // namespace

PyLease::~PyLease() {
    // The lease may hold the last reference to its client, whose threads are joined then: one
    // of them may be waiting for the GIL to drop a Python callback.
    py::gil_scoped_release nogil;
    if (lease.held()) {
        detail::start_release(std::move(lease), [](std::error_code) {});
    } else {
        Lease gone(std::move(lease));
    }
}

py::object py_name(const std::string& name) {
    PyObject* s = PyUnicode_DecodeUTF8(name.data(), static_cast<Py_ssize_t>(name.size()), nullptr);
    if (s) return py::reinterpret_steal<py::object>(s);
    PyErr_Clear();
    return py::bytes(name);
}

void define_lease(py::module_& m) {
    using L = PyLease;
    py::class_<L>(m, "Lease", "One holding of a lock; dropping it releases in the background.")
        .def_property_readonly("name", [](const L& l) { return py_name(l.lease.name()); })
        .def_property_readonly("token", [](const L& l) { return l.lease.token(); })
        .def_property_readonly("fence", [](const L& l) { return l.lease.fence(); })
        .def_property_readonly("fences",
                               [](const L& l) {
                                   py::list out;
                                   for (auto& f : l.lease.fences())
                                       out.append(py::make_tuple(py_name(f.name), f.fence));
                                   return out;
                               })
        .def_property_readonly("valid_until",
                               [](const L& l) { return monotonic(l.lease.valid_until()); })
        .def_property_readonly("valid", [](const L& l) { return l.lease.valid(); })
        .def_property_readonly("lost", [](const L& l) { return l.lease.lost(); })
        .def_property_readonly("held", [](const L& l) { return l.lease.held(); })
        .def(
            "release", [](L& l) { l.lease.release(); }, py::call_guard<py::gil_scoped_release>())
        .def("release_in_background",
             [](L& l) {
                 if (l.lease.held())
                     detail::start_release(sharing(l.lease), [](std::error_code) {});
             })
        .def("start_release",
             [](L& l, const std::shared_ptr<Completions>& done, py::object target) {
                 // Goes to the loop with the rest of this asyncio turn's calls (done's flush).
                 auto loop = detail::loop_of(l.lease);
                 auto report = [done, loop, t = hold(std::move(target))](std::error_code ec,
                                                                         std::string why) {
                     done->push(loop, t, ec, std::move(why), std::nullopt);
                 };
                 done->send(loop, [held = std::make_shared<Releasing>(sharing(l.lease)), report] {
                     detail::start_release_reporting(std::move(held->lease), report);
                 });
             })
        .def(
            "extend", [](L& l, double ttl) { l.lease.extend(to_ms(ttl, "ttl")); },
            py::call_guard<py::gil_scoped_release>())
        .def(
            "is_current", [](const L& l) { return l.lease.is_current(); },
            py::call_guard<py::gil_scoped_release>())
        .def(
            "put_if_current",
            [](L& l, const std::string& key, const std::string& value) {
                return l.lease.put_if_current(key, value);
            },
            py::call_guard<py::gil_scoped_release>());
}

}  // namespace deadbolt::python
