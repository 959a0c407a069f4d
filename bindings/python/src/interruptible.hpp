// Blocking calls of the C++ API made from Python: the GIL released while they run, and on the
// main thread a call that takes a stop token is cancelled by Ctrl-C.
#pragma once

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

namespace deadbolt::python {

namespace py = pybind11;

/// True on the interpreter's main thread (where signals are handled). Call with the GIL held.
bool on_main_thread();

/// Waits with the GIL released until done() holds (read with m held; cv is notified when it
/// turns true). On the main thread it looks for signals every 50 ms (a local check, nothing is
/// sent): on one it calls stop(), waits for done(), calls abandon() (without the GIL or m) and
/// raises the signal's exception. Call with the GIL held.
void wait_interruptibly(std::mutex& m, std::condition_variable& cv,
                        const std::function<bool()>& done, const std::function<void()>& stop,
                        const std::function<void()>& abandon);

/// Runs fn(token) with the GIL released and returns what it returns. On the main thread fn
/// runs on a thread of its own while this one looks for signals every 50 ms (a local check):
/// a signal requests stop on token, waits for fn to end, drops its result (without the GIL:
/// a Lease releases) and raises the signal's exception. Call with the GIL held.
template <class R>
R interruptible(const std::function<R(std::stop_token)>& fn) {
    if (!on_main_thread()) {
        py::gil_scoped_release nogil;
        return fn({});
    }
    struct Shared {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
        std::optional<R> result;
        std::exception_ptr error;
    };
    auto sh = std::make_shared<Shared>();
    std::stop_source stop;
    std::thread worker;
    {
        py::gil_scoped_release nogil;
        worker = std::thread([sh, fn, token = stop.get_token()] {
            std::optional<R> r;
            std::exception_ptr e;
            try {
                r.emplace(fn(token));
            } catch (...) {
                e = std::current_exception();
            }
            std::lock_guard g(sh->m);
            sh->result = std::move(r);
            sh->error = e;
            sh->done = true;
            sh->cv.notify_one();
        });
    }
    wait_interruptibly(
        sh->m, sh->cv, [&] { return sh->done; }, [&] { stop.request_stop(); },
        [&] {
            worker.join();
            sh->result.reset();
        });
    {
        py::gil_scoped_release nogil;
        worker.join();
    }
    if (sh->error) std::rethrow_exception(sh->error);
    return std::move(*sh->result);
}

/// Deletes a T without the GIL: its destructor may release a holding over the network, or
/// join threads one of which may be waiting for the GIL.
template <class T>
struct ReleasingDelete {
    void operator()(T* p) const noexcept {
        py::gil_scoped_release nogil;
        delete p;
    }
};

}  // namespace deadbolt::python
