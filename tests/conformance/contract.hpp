// The base of every conformance suite: the backend under test, names of each test's own, and
// clients of it. Suites are typed over Backends and say nothing of any engine.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "backends.hpp"
#include "deadbolt/deadbolt.hpp"

namespace deadbolt::conformance {

using Clock = std::chrono::steady_clock;

template <class B>
class Contract : public ::testing::Test {
  protected:
    B& backend = shared<B>();
    // A name of this test's own: the backend is shared by the suite.
    static std::string name(const std::string& what) {
        return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ":" +
               what;
    }
    Client connect(const ClientOptions& o = {}) { return Client::connect(backend.url(), o); }
};

using Backends = ::testing::Types<OneServer, Sentinel, Cluster, Redlock>;

}  // namespace deadbolt::conformance
