// The primitives that are not a Lock over a name: semaphores (permits as leases), the
// countdown latch, the rate limiter and the reentrant mutex, over their C++ classes.
#include <pybind11/stl.h>

#include "deadbolt/deadbolt.hpp"
#include "interruptible.hpp"
#include "lease.hpp"
#include "options.hpp"
#include "seconds.hpp"

namespace deadbolt::python {

namespace {

template <class T>
using Holder = std::unique_ptr<T, ReleasingDelete<T>>;

void define_permit_semaphore(py::module_& m) {
    using S = PermitExpirableSemaphore;
    py::class_<S, Holder<S>>(m, "Semaphore", "Permits across processes, each a lease.")
        .def(
            "acquire",
            [](const S& s, std::optional<double> timeout) {
                auto deadline = deadline_in(timeout);  // checked here, with the GIL
                return std::make_unique<PyLease>(interruptible<Lease>(
                    [&](std::stop_token t) { return s.acquire(waiting(deadline, std::move(t))); }));
            },
            py::arg("timeout") = py::none())
        .def("try_acquire",
             [](const S& s) -> std::unique_ptr<PyLease> {
                 Lease l;
                 {
                     py::gil_scoped_release nogil;
                     l = s.try_acquire();
                 }
                 if (!l) return nullptr;
                 return std::make_unique<PyLease>(std::move(l));
             })
        .def("release_id", &S::release, py::call_guard<py::gil_scoped_release>())
        .def("extend_id",
             [](const S& s, const std::string& id, double ttl) {
                 auto ms = to_ms(ttl, "ttl");
                 py::gil_scoped_release nogil;
                 return s.extend(id, ms);
             })
        .def("available", &S::available, py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("permits", &S::max);
    m.def("semaphore",
          [](const Client& c, const std::string& name, int permits, const py::dict& options) {
              return Holder<S>(new S(c.permit_semaphore(name, permits, mutex_options(options))));
          });
}

void define_latch(py::module_& m) {
    using L = CountDownLatch;
    py::class_<L, Holder<L>>(m, "Latch", "A count that processes wait to reach zero.")
        .def(
            "try_set_count",
            [](const L& l, std::int64_t count, double ttl) {
                auto ms = to_ms(ttl, "ttl");
                py::gil_scoped_release nogil;
                return l.try_set_count(count, ms);
            },
            py::arg("count"), py::arg("ttl") = 24 * 3600.0)
        .def("count_down", &L::count_down, py::call_guard<py::gil_scoped_release>())
        .def("count", &L::count, py::call_guard<py::gil_scoped_release>())
        .def(
            "wait",
            [](const L& l, std::optional<double> timeout) {
                auto deadline = deadline_in(timeout);
                return interruptible<bool>(
                    [&](const std::stop_token& t) { return l.wait_until(deadline, t); });
            },
            py::arg("timeout") = py::none());
    m.def("latch",
          [](const Client& c, const std::string& name) { return Holder<L>(new L(c.latch(name))); });
}

void define_rate_limiter(py::module_& m) {
    using R = RateLimiter;
    py::class_<R, Holder<R>>(m, "RateLimiter", "A token bucket shared by processes.")
        .def(
            "try_acquire",
            [](const R& r, std::int64_t n) {
                RateDecision d;
                {
                    py::gil_scoped_release nogil;
                    d = r.try_acquire(n);
                }
                return py::make_tuple(d.allowed, seconds_of(d.retry_in));
            },
            py::arg("n") = 1)
        .def(
            "acquire",
            [](const R& r, std::int64_t n, std::optional<double> timeout) {
                auto deadline = deadline_in(timeout);
                return interruptible<bool>([&](std::stop_token t) {
                    return r.acquire(n, waiting(deadline, std::move(t)));
                });
            },
            py::arg("n") = 1, py::arg("timeout") = py::none())
        .def("available", &R::available, py::call_guard<py::gil_scoped_release>());
    m.def("rate_limiter", [](const Client& c, const std::string& name, std::int64_t rate,
                             double per, std::int64_t burst) {
        RateLimit limit{rate, to_ms(per, "per"), burst};
        return Holder<R>(new R(c.rate_limiter(name, limit)));
    });
}

void define_reentrant(py::module_& m) {
    using M = ReentrantMutex;
    py::class_<M, Holder<M>>(m, "ReentrantMutex",
                             "A lock its owner (a thread) may take again; released as often.")
        .def(
            "acquire",
            [](M& r, std::optional<double> timeout) {
                auto deadline = deadline_in(timeout);
                py::gil_scoped_release nogil;
                if (!deadline) {
                    r.lock();
                    return true;
                }
                return r.try_lock_until(*deadline);
            },
            py::arg("timeout") = py::none())
        .def("release", &M::unlock, py::call_guard<py::gil_scoped_release>())
        .def_property_readonly("hold_count", &M::hold_count)
        .def_property_readonly("owner", &M::owner)
        .def_property_readonly("fence", [](M& r) { return r.lease().fence(); });
    m.def("reentrant_mutex", [](const Client& c, const std::string& name, const py::dict& options,
                                const std::string& owner) {
        return Holder<M>(new M(c.reentrant_mutex(name, mutex_options(options), owner)));
    });
}

}  // namespace

void define_primitives(py::module_& m) {
    define_permit_semaphore(m);
    define_latch(m);
    define_rate_limiter(m);
    define_reentrant(m);
}

}  // namespace deadbolt::python
