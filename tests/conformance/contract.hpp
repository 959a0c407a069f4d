// The base of every conformance suite: the backend under test, names of each test's own, and
// clients of it. Suites are typed over Backends and say nothing of any engine.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "backends.hpp"
#include "deadbolt/deadbolt.hpp"

namespace deadbolt::conformance {

using Clock = std::chrono::steady_clock;

/// Why a waiter that got in only at its deadline fails a wake-up test: the last look at the
/// deadline finds the lock free too, so only getting in before it proves the wake-up.
inline constexpr const char* kWokenLate = "got in at the deadline's last look, not by a wake-up";

template <class B>
class Contract : public ::testing::Test {
  protected:
    B& backend = shared<B>();
    // A name of this test's own: the backend is shared by the suite.
    static std::string name(const std::string& what) {
        return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ":" +
               what;
    }
    Client connect(ClientOptions o = {}) {
        if constexpr (requires { B::kSessionWithin; })
            o.connect_timeout = std::max(o.connect_timeout, B::kSessionWithin);
        if constexpr (requires { B::kAnswerWithin; })
            o.command_timeout = std::max(o.command_timeout, B::kAnswerWithin);
        return Client::connect(backend.url(), o);
    }
    /// The shortest TTL the backend takes.
    static constexpr std::chrono::milliseconds kShort = B::kShortTtl;
};

/// f is refused with a UsageError that names what and says why, not merely that it is not
/// offered.
template <class F>
void expect_refused(F&& f, const std::string& what) {
    try {
        f();
        ADD_FAILURE() << what << " not refused";
    } catch (const UsageError& e) {
        const std::string why = e.what();
        EXPECT_NE(why.find(what), std::string::npos)
            << "the refusal does not name " << what << ": " << why;
        EXPECT_EQ(why.find("is not offered by this engine"), std::string::npos)
            << "a refusal without its reason: " << why;
    }
}

/// Every backend built in: each suite runs on all of them, and a backend that does not keep
/// the suite's primitive (backends.hpp's k-flags) is checked to refuse it with the reason.
using Backends = ::testing::Types<OneServer, Sentinel, Cluster, Redlock
#ifdef DEADBOLT_TEST_ETCD
                                  ,
                                  Etcd
#endif
#ifdef DEADBOLT_TEST_ZK
                                  ,
                                  Zk
#endif
#ifdef DEADBOLT_TEST_PG
                                  ,
                                  Pg
#endif
#ifdef DEADBOLT_TEST_MY
                                  ,
                                  My
#endif
#ifdef DEADBOLT_TEST_MC
                                  ,
                                  Mc, McMajority
#endif
#ifdef DEADBOLT_TEST_FILE
                                  ,
                                  File
#endif
#ifdef DEADBOLT_TEST_MEMORY
                                  ,
                                  Memory
#endif
                                  >;

}  // namespace deadbolt::conformance
