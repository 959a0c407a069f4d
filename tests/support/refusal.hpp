// refusal: what connecting to a URL throws, for the bad-input tests of every engine.
#pragma once

#include <string>

#include "deadbolt/client.hpp"

namespace deadbolt::test {

/// The message of the E that Client::connect(url) throws; "" when it connects.
template <class E>
std::string refusal(const std::string& url) {
    try {
        Client::connect(url);
    } catch (const E& e) {
        return e.what();
    }
    return "";
}

}  // namespace deadbolt::test
