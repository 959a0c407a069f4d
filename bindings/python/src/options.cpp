#include "options.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "deadbolt/error.hpp"
#include "errors.hpp"
#include "lease.hpp"
#include "refs.hpp"
#include "seconds.hpp"

namespace deadbolt::python {

namespace {

[[noreturn]] void refuse(const std::string& what) {
    throw_error(make_error_code(errc::invalid_argument), what);
}

// Reads d's entries through set(key, value), refusing a key not in known.
template <class Set>
void each_option(const py::dict& d, const std::vector<std::string>& known, Set set) {
    for (auto [k, v] : d) {
        auto key = py::cast<std::string>(k);
        bool ok = false;
        for (const auto& n : known) ok = ok || n == key;
        if (!ok) {
            std::string what = "unknown option '" + key + "' (the options are: ";
            for (const auto& n : known) {
                if (&n != known.data()) what += ", ";
                what += n;
            }
            refuse(what + ")");
        }
        try {
            set(key, py::reinterpret_borrow<py::object>(v));
        } catch (const py::cast_error&) {
            refuse("option '" + key + "' has the wrong type (" +
                   py::cast<std::string>(py::str(py::type::of(v).attr("__name__"))) + ")");
        }
    }
}

double seconds(const py::object& v) {
    if (py::isinstance<py::bool_>(v)) throw py::cast_error();
    return py::cast<double>(v);
}

}  // namespace

ClientOptions client_options(const py::dict& d) {
    ClientOptions o;
    each_option(
        d,
        {"connect_timeout", "command_timeout", "key_prefix", "username", "password", "keepalive",
         "tls_ca_file", "tls_cert_file", "tls_key_file", "tls_sni", "tls_verify", "loop_spin"},
        [&](const std::string& k, const py::object& v) {
            if (k == "connect_timeout") o.connect_timeout = to_ms(seconds(v), k.c_str());
            if (k == "command_timeout") o.command_timeout = to_ms(seconds(v), k.c_str());
            if (k == "key_prefix") o.key_prefix = py::cast<std::string>(v);
            if (k == "username") o.username = py::cast<std::string>(v);
            if (k == "password") o.password = py::cast<std::string>(v);
            if (k == "keepalive") o.keepalive = py::cast<bool>(v);
            if (k == "tls_ca_file") o.tls.ca_file = py::cast<std::string>(v);
            if (k == "tls_cert_file") o.tls.cert_file = py::cast<std::string>(v);
            if (k == "tls_key_file") o.tls.key_file = py::cast<std::string>(v);
            if (k == "tls_sni") o.tls.sni = py::cast<std::string>(v);
            if (k == "tls_verify") o.tls.verify = py::cast<bool>(v);
            if (k == "loop_spin") {  // seconds, as every time here, in microseconds' grain
                double s = seconds(v);
                to_ms(s, k.c_str());  // refuses what every time is refused for
                o.loop_spin = std::chrono::microseconds(static_cast<long long>(std::ceil(s * 1e6)));
            }
        });
    return o;
}

MutexOptions mutex_options(const py::dict& d) {
    MutexOptions o;
    each_option(d,
                {"ttl", "auto_renew", "renew_every", "max_hold", "lock_delay", "wait_jitter",
                 "handoff_grace", "waiter_ttl", "on_lost"},
                [&](const std::string& k, const py::object& v) {
                    const char* what = k.c_str();
                    if (k == "ttl") o.ttl = to_ms(seconds(v), what);
                    if (k == "auto_renew") o.auto_renew = py::cast<bool>(v);
                    if (k == "renew_every") o.renew_every = to_ms(seconds(v), what);
                    if (k == "max_hold") o.max_hold = to_ms(seconds(v), what);
                    if (k == "lock_delay") o.lock_delay = to_ms(seconds(v), what);
                    if (k == "wait_jitter") o.wait_jitter = to_ms(seconds(v), what);
                    if (k == "handoff_grace") o.handoff_grace = to_ms(seconds(v), what);
                    if (k == "waiter_ttl") o.waiter_ttl = to_ms(seconds(v), what);
                    if (k == "on_lost" && !v.is_none()) {
                        if (!PyCallable_Check(v.ptr())) refuse("option 'on_lost' must be callable");
                        o.on_lost = [f = hold(v)](std::string_view name, std::error_code why) {
                            post([f, n = std::string(name), why] {
                                f->get()(py_name(n),
                                         exception_for(why, "the lease on '" + n +
                                                                "' was lost: " + why.message()));
                            });
                        };
                    }
                });
    return o;
}

}  // namespace deadbolt::python
