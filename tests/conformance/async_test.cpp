// Asynchronous API conformance: on every backend an async acquisition excludes, is woken by
// a release (not by the TTL or the deadline's last look), a deadline or a cancellation ends a
// wait, and the observer hears it all as it hears blocking acquisitions.
#include "deadbolt/async.hpp"

#include <gtest/gtest.h>

#include <asio/use_future.hpp>

#include <algorithm>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "contract.hpp"

using namespace std::chrono_literals;

namespace deadbolt::conformance {

template <class B>
class AsyncContract : public Contract<B> {};

TYPED_TEST_SUITE(AsyncContract, Backends, BackendName);

TYPED_TEST(AsyncContract, ExcludesAndIsWokenByARelease) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto held = async_acquire(a, n, {.ttl = 60s}, {}, asio::use_future).get();
    auto deadline = Clock::now() + 20s;
    auto waiting = async_acquire(b, n, {}, {.deadline = deadline}, asio::use_future);
    EXPECT_EQ(waiting.wait_for(200ms), std::future_status::timeout);  // held: it waits
    auto first = held.fence();
    async_release(held, asio::use_future).get();
    auto got = waiting.get();
    EXPECT_LT(Clock::now(), deadline) << kWokenLate;
    EXPECT_GT(got.fence(), first);
}

TYPED_TEST(AsyncContract, ADeadlineEndsAWaitWithNotAcquired) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto held = a.acquire(n, {.ttl = 60s});
    std::promise<std::error_code> ended;
    async_acquire(b, n, {}, {.deadline = Clock::now() + 100ms},
                  [&](std::error_code ec, Lease) { ended.set_value(ec); });
    EXPECT_EQ(ended.get_future().get(), errc::not_acquired);
}

TYPED_TEST(AsyncContract, TheObserverHearsAsynchronousAcquisitionsAsBlockingOnes) {
    auto n = this->name("job");
    std::mutex m;
    std::vector<LockEventKind> heard;
    ClientOptions o;
    o.observer = [&](const LockEvent& e) {
        std::lock_guard lk(m);
        heard.push_back(e.kind);
    };
    auto c = this->connect(o), other = this->connect();
    auto held = other.acquire(n);
    auto late = async_acquire(c, n, {}, {.deadline = Clock::now() + 100ms}, asio::use_future);
    EXPECT_THROW(late.get(), std::system_error);
    held.release();
    auto l = async_acquire(c, n, {}, {}, asio::use_future).get();
    async_release(l, asio::use_future).get();
    using K = LockEventKind;
    std::lock_guard lk(m);
    auto count = [&](K k) { return std::count(heard.begin(), heard.end(), k); };
    EXPECT_GE(count(K::refused), 1);
    EXPECT_EQ(count(K::gave_up), 1);
    EXPECT_EQ(count(K::granted), 1);
    EXPECT_EQ(count(K::released), 1);
}

TYPED_TEST(AsyncContract, ACancelledWaitEndsWithCancelled) {
    auto n = this->name("job");
    auto a = this->connect(), b = this->connect();
    auto held = a.acquire(n, {.ttl = 60s});
    std::stop_source stop;
    std::promise<std::error_code> ended;
    async_acquire(b, n, {}, {.cancel = stop.get_token()},
                  [&](std::error_code ec, Lease) { ended.set_value(ec); });
    std::this_thread::sleep_for(100ms);
    stop.request_stop();
    EXPECT_EQ(ended.get_future().get(), errc::cancelled);
}

}  // namespace deadbolt::conformance
