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
    Client connect(const ClientOptions& o = {}) { return Client::connect(backend.url(), o); }
    /// The shortest TTL the backend takes.
    static constexpr std::chrono::milliseconds kShort = B::kShortTtl;
};

using Backends = ::testing::Types<OneServer, Sentinel, Cluster, Redlock>;
/// The suites etcd's backend (under construction) passes already run against it too.
#ifdef DEADBOLT_TEST_ETCD
using BackendsWithEtcd = ::testing::Types<OneServer, Sentinel, Cluster, Redlock, Etcd>;
#else
using BackendsWithEtcd = Backends;
#endif
/// The suites ZooKeeper's backend (under construction) passes already.
#if defined(DEADBOLT_TEST_ETCD) && defined(DEADBOLT_TEST_ZK)
using BackendsWithZk = ::testing::Types<OneServer, Sentinel, Cluster, Redlock, Etcd, Zk>;
#elif defined(DEADBOLT_TEST_ZK)
using BackendsWithZk = ::testing::Types<OneServer, Sentinel, Cluster, Redlock, Zk>;
#else
using BackendsWithZk = BackendsWithEtcd;
#endif

/// The suites PostgreSQL's backend (under construction) passes already.
template <class List, class T>
struct Append;
template <class... Ts, class T>
struct Append<::testing::Types<Ts...>, T> {
    using type = ::testing::Types<Ts..., T>;
};
#ifdef DEADBOLT_TEST_PG
using BackendsWithPg = Append<BackendsWithZk, Pg>::type;
#else
using BackendsWithPg = BackendsWithZk;
#endif
/// The suites MariaDB's backend (under construction) passes already.
#ifdef DEADBOLT_TEST_MY
using BackendsWithMy = Append<BackendsWithPg, My>::type;
#else
using BackendsWithMy = BackendsWithPg;
#endif

}  // namespace deadbolt::conformance
