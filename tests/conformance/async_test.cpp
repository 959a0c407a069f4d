// Asynchronous API conformance: on every backend an async acquisition excludes, is woken by
// a release (not by the TTL or the deadline's last look), and a cancelled wait ends.
#include "deadbolt/async.hpp"

#include <gtest/gtest.h>

#include <asio/use_future.hpp>

#include <future>
#include <thread>

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
