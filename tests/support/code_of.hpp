// code_of: the errc a call throws, for tests that check which error a call fails with.
#pragma once

#include <functional>

#include "deadbolt/error.hpp"

namespace deadbolt::test {

/// The errc a call throws as a deadbolt::Error; errc{} when it does not throw.
inline errc code_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return static_cast<errc>(e.code().value());
    }
    return errc{};
}

}  // namespace deadbolt::test
