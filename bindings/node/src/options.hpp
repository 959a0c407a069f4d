// Options objects from JS (camelCase keys, times in milliseconds) as the C++ library's.
#pragma once

#include <cstdint>

#include "addon.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::node {

/// connect()'s options. Throws the package's UsageError for an unknown key (listing the
/// known ones) or a value of the wrong type or range (naming the key).
ClientOptions client_options(const Napi::Value& v);
/// A lock's options; losses of its leases are told to the package's lost(request, ...).
/// Throws as client_options().
MutexOptions mutex_options(const Napi::Value& v, std::uint32_t request);

}  // namespace deadbolt::node
