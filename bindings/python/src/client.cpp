// deadbolt._deadbolt.Client: connect, acquire (waiting with the GIL released, and
// interruptible by Ctrl-C on the main thread), the asynchronous start for asyncio, and the
// client's other calls.
#include <pybind11/stl.h>

#include <condition_variable>
#include <mutex>
#include <stop_token>

#include "completions.hpp"
#include "deadbolt/async.hpp"
#include "deadbolt/deadbolt.hpp"
#include "errors.hpp"
#include "interruptible.hpp"
#include "lease.hpp"
#include "loader/engine_loader.hpp"
#include "options.hpp"
#include "seconds.hpp"

namespace deadbolt::python {

namespace {

using namespace std::chrono_literals;

// What to acquire: detail::target_named's modes; names (a list) for "all", else a name.
detail::AsyncTarget target_of(const py::object& name, const std::string& mode,
                              const std::string& value) {
    if (mode == "all")
        return detail::target_named(mode, {}, py::cast<std::vector<std::string>>(name), {});
    return detail::target_named(mode, py::cast<std::string>(name), {}, value);
}

// One acquisition's outcome, filled on deadbolt's event loop.
struct Outcome {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::error_code ec;
    std::string why;
    Lease lease;
};

// The handle of an asynchronous acquisition: cancel() ends its wait.
struct Pending {
    std::stop_source stop;
    void cancel() { stop.request_stop(); }
};

// One lock's request, parsed once when its Lock is made (bad options are refused then), and
// reused by every acquisition of that Lock.
struct Request {
    struct Spec {
        Client client;
        detail::AsyncTarget target;
        MutexOptions options;
    };
    std::shared_ptr<const Spec> spec;  // shared with the starts queued for the client's loop
    detail::LoopHandle loop;

    std::unique_ptr<PyLease> acquire(std::optional<double> timeout) const {
        auto how = waiting(deadline_in(timeout));
        auto out = std::make_shared<Outcome>();
        std::stop_source stop;
        detail::start_acquire_reporting(spec->client, spec->target, spec->options, how,
                                        stop.get_token(),
                                        [out](std::error_code ec, std::string why, Lease l) {
                                            {
                                                std::lock_guard g(out->m);
                                                out->ec = ec;
                                                out->why = std::move(why);
                                                out->lease = std::move(l);
                                                out->done = true;
                                            }
                                            out->cv.notify_one();
                                        });
        // Ctrl-C cancels the acquisition; a lease it got anyway is released.
        wait_interruptibly(
            out->m, out->cv, [&] { return out->done; }, [&] { stop.request_stop(); },
            [&] {
                if (out->lease)
                    detail::start_release(std::move(out->lease), [](std::error_code) {});
            });
        if (out->ec) throw_error(out->ec, out->why);
        return std::make_unique<PyLease>(std::move(out->lease));
    }

    // Starts an acquisition whose result goes to done as (future, exception, lease).
    // The start goes to the client's loop with the rest of this asyncio turn's (done's flush).
    std::unique_ptr<Pending> start(std::optional<double> timeout,
                                   const std::shared_ptr<Completions>& done,
                                   py::object future) const {
        auto how = waiting(deadline_in(timeout));
        auto pending = std::make_unique<Pending>();
        auto report = [done, loop = loop, f = hold(std::move(future))](std::error_code ec,
                                                                       std::string why, Lease l) {
            done->push(loop, f, ec, std::move(why),
                       ec ? std::nullopt : std::optional<Lease>(std::move(l)));
        };
        done->send(loop, [s = spec, how, token = pending->stop.get_token(), report] {
            detail::start_acquire_reporting(s->client, s->target, s->options, how, token, report);
        });
        return pending;
    }
};

py::dict status_dict(const LockStatus& s) {
    py::list holders;
    for (const auto& h : s.held_by) {
        py::dict d;
        d["host"] = h.host;
        d["pid"] = h.pid;
        d["ttl"] = seconds_of(h.ttl);
        d["client"] = h.client;
        d["since"] =
            h.since ? py::cast(std::chrono::duration<double>(h.since->time_since_epoch()).count())
                    : py::none();
        holders.append(d);
    }
    py::dict d;
    d["held"] = s.held;
    d["ttl"] = seconds_of(s.ttl);
    d["last_fence"] = s.last_fence;
    d["kind"] = s.kind;
    d["holders"] = s.holders;
    d["waiters"] = s.waiters;
    d["permits"] = s.permits;
    d["writer_waiting"] = s.writer_waiting;
    d["held_by"] = holders;
    d["value"] = s.value;
    d["session_timeout"] = seconds_of(s.session_timeout);
    return d;
}

py::tuple fenced_tuple(const FencedResult& r) {
    return py::make_tuple(r.accepted, r.highest, r.version, r.stale_fence);
}

}  // namespace

void define_client(py::module_& m) {
    on_main_thread();  // looks the main thread up once, at import
    using R = py::call_guard<py::gil_scoped_release>;
    py::class_<Pending>(m, "Pending", "An asynchronous acquisition; cancel() ends its wait.")
        .def("cancel", &Pending::cancel);
    py::class_<Request, std::unique_ptr<Request, ReleasingDelete<Request>>>(
        m, "Request", "One lock's acquisitions: a name, a mode and options, parsed once.")
        .def("acquire", &Request::acquire, py::arg("timeout"))
        .def("start", &Request::start, py::arg("timeout"), py::arg("done"), py::arg("future"));
    py::class_<Client, std::unique_ptr<Client, ReleasingDelete<Client>>>(
        m, "Client", "A connection to one engine, chosen by the URL's scheme.")
        .def_static(
            "connect",
            [](const std::string& url, const py::dict& options) {
                auto o = client_options(options);
                py::gil_scoped_release nogil;
                detail::load_engine_for(url);  // the engine's library, loaded at first use
                return std::unique_ptr<Client, ReleasingDelete<Client>>(
                    new Client(Client::connect(url, o)));
            },
            py::arg("url"), py::arg("options"))
        .def_static("url_forms",
                    [] {
                        detail::load_all_engines();
                        return Client::url_forms();
                    })
        .def(
            "request",
            [](const Client& c, const py::object& name, const std::string& mode,
               const py::dict& options, const std::string& value) {
                return std::unique_ptr<Request, ReleasingDelete<Request>>(
                    new Request{std::make_shared<const Request::Spec>(Request::Spec{
                                    c, target_of(name, mode, value), mutex_options(options)}),
                                detail::loop_of(c)});
            },
            py::arg("name"), py::arg("mode"), py::arg("options"), py::arg("value") = "")
        .def("status",
             [](const Client& c, const std::string& name) {
                 LockStatus s;
                 {
                     py::gil_scoped_release nogil;
                     s = c.status(name);
                 }
                 return status_dict(s);
             })
        .def("list",
             [](const Client& c, const std::string& pattern, bool foreign) {
                 std::vector<ListedLock> locks;
                 {
                     py::gil_scoped_release nogil;
                     locks = c.list(pattern, foreign);
                 }
                 py::list out;
                 for (const auto& l : locks)
                     out.append(py::make_tuple(py_name(l.name), status_dict(l.status)));
                 return out;
             })
        .def("force_unlock", &Client::force_unlock, R())
        .def("fenced_set",
             [](const Client& c, const std::string& k, const std::string& v, std::uint64_t f) {
                 FencedResult r;
                 {
                     py::gil_scoped_release nogil;
                     r = c.fenced_set(k, v, f);
                 }
                 return fenced_tuple(r);
             })
        .def("fenced_cas",
             [](const Client& c, const std::string& k, const std::string& v, std::uint64_t f,
                std::uint64_t version) {
                 FencedResult r;
                 {
                     py::gil_scoped_release nogil;
                     r = c.fenced_cas(k, v, f, version);
                 }
                 return fenced_tuple(r);
             })
        .def("fenced_get",
             [](const Client& c, const std::string& k) {
                 FencedValue r;
                 {
                     py::gil_scoped_release nogil;
                     r = c.fenced_get(k);
                 }
                 return py::make_tuple(r.value ? py::object(py::bytes(*r.value)) : py::none(),
                                       r.version);
             })
        .def("ping", &Client::ping, R())
        .def("lock_key",
             [](const Client& c, const std::string& n) { return py::bytes(c.lock_key(n)); })
        .def_property_readonly("warnings", &Client::warnings);
}

}  // namespace deadbolt::python
