#include "refs.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace deadbolt::python {

namespace {

// One thread, started at the first post: callbacks are rare (a lost lease), and one thread
// keeps them in order.
struct CallbackThread {
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;
    bool stopping = false;
    std::thread thread;

    void run() {
        std::unique_lock lk(m);
        for (;;) {
            cv.wait(lk, [&] { return stopping || !queue.empty(); });
            if (queue.empty()) return;
            auto fn = std::move(queue.front());
            queue.pop_front();
            lk.unlock();
            {
                py::gil_scoped_acquire gil;
                try {
                    fn();
                } catch (py::error_already_set& e) {
                    e.discard_as_unraisable("deadbolt callback");
                } catch (const std::exception& e) {
                    PyErr_SetString(PyExc_RuntimeError, e.what());
                    PyErr_WriteUnraisable(nullptr);
                }
                fn = nullptr;  // its references go with the GIL held
            }
            lk.lock();
        }
    }
};

CallbackThread& callbacks() {
    static auto* t = new CallbackThread;  // never destroyed: it may outlive static destructors
    return *t;
}

}  // namespace

PyRef::~PyRef() {
    if (!Py_IsInitialized() || _Py_IsFinalizing()) {
        obj_.release();  // the interpreter is going: leak rather than touch it
        return;
    }
    py::gil_scoped_acquire gil;
    obj_ = py::object();
}

void post(std::function<void()> fn) noexcept {
    auto& t = callbacks();
    try {
        std::lock_guard g(t.m);
        if (t.stopping) return;
        if (!t.thread.joinable()) t.thread = std::thread([&t] { t.run(); });
        t.queue.push_back(std::move(fn));
    } catch (...) {
        return;  // no memory or no thread: the callback is lost, as a dropped one would be
    }
    t.cv.notify_one();
}

void shutdown() noexcept {
    auto& t = callbacks();
    {
        std::lock_guard g(t.m);
        t.stopping = true;
    }
    t.cv.notify_one();
    if (t.thread.joinable()) {
        py::gil_scoped_release nogil;  // the thread takes the GIL for what is still queued
        t.thread.join();
    }
}

}  // namespace deadbolt::python
