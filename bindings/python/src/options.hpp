// Python keyword options (a dict) as deadbolt's option structs, refusing unknown names.
#pragma once

#include <pybind11/pybind11.h>

#include "deadbolt/options.hpp"

namespace deadbolt::python {

namespace py = pybind11;

/// ClientOptions from connect()'s keywords: connect_timeout, command_timeout (seconds),
/// key_prefix, username, password, keepalive, tls_ca_file, tls_cert_file, tls_key_file,
/// tls_sni, tls_verify. Throws UsageError naming an unknown or ill-typed option.
ClientOptions client_options(const py::dict& d);

/// MutexOptions from a lock's keywords: ttl, renew_every, max_hold, lock_delay, wait_jitter,
/// handoff_grace, waiter_ttl (seconds), auto_renew, on_lost (called as on_lost(name, error)
/// on the binding's callback thread). Throws UsageError as client_options does.
MutexOptions mutex_options(const py::dict& d);

}  // namespace deadbolt::python
