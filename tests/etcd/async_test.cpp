// deadbolt's asynchronous API on real etcd members: an attempt's Txn and a release go out
// without holding the client's event loop, so one stalled call holds up no other.
#include "deadbolt/async.hpp"

#include <gtest/gtest.h>

#include <asio/use_future.hpp>

#include <atomic>
#include <future>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "etcd_cluster.hpp"
#include "eventually.hpp"
#include "tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::Client;
using deadbolt::Lease;
using deadbolt::test::EtcdCluster;

TEST(EtcdAsync, AThousandAcquisitionsInFlightFromOneThreadAreAllGranted) {
    auto c = Client::connect(EtcdCluster::shared().url());
    constexpr int kInFlight = 1000;
    std::vector<Lease> held(kInFlight);
    std::atomic<int> granted{0}, failed{0};
    std::promise<void> all;
    for (int i = 0; i < kInFlight; ++i)
        deadbolt::async_acquire(c, "many-" + std::to_string(i), {}, {},
                                [&, i](std::error_code ec, Lease l) {
                                    (ec ? failed : granted)++;
                                    held[static_cast<std::size_t>(i)] = std::move(l);
                                    if (granted + failed == kInFlight) all.set_value();
                                });
    ASSERT_EQ(all.get_future().wait_for(120s), std::future_status::ready);
    EXPECT_EQ(granted.load(), kInFlight);
    EXPECT_EQ(failed.load(), 0);
    std::atomic<int> released{0};
    std::promise<void> gone;
    for (auto& l : held)
        deadbolt::async_release(l, [&](std::error_code ec) {
            EXPECT_FALSE(ec) << ec.message();
            if (++released == kInFlight) gone.set_value();
        });
    ASSERT_EQ(gone.get_future().wait_for(120s), std::future_status::ready);
    EXPECT_FALSE(c.status("many-0").held);
    EXPECT_FALSE(c.status("many-999").held);
}

TEST(EtcdAsync, AStalledAttemptHoldsUpNoOtherAsyncCall) {
    auto& etcd = EtcdCluster::shared();
    deadbolt::test::TcpProxy proxy(etcd.client_port(0));
    auto c = Client::connect("etcd://127.0.0.1:" + std::to_string(proxy.port()) +
                             "?command_timeout=30s");
    c.acquire("stall-warm").release();  // the client's lease exists: no grant on the way
    proxy.stall_requests(true);
    auto stuck = deadbolt::async_acquire(c, "stall-a", {}, {}, asio::use_future);
    std::this_thread::sleep_for(200ms);  // its Txn is out, held by the proxy
    std::stop_source stop;
    stop.request_stop();
    std::promise<std::error_code> other;
    deadbolt::async_acquire(c, "stall-b", {}, {.cancel = stop.get_token()},
                            [&](std::error_code ec, Lease) { other.set_value(ec); });
    // The loop is free: the second call ends (cancelled) while the first still waits.
    auto ended = other.get_future();
    ASSERT_EQ(ended.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(ended.get(), deadbolt::errc::cancelled);
    EXPECT_EQ(stuck.wait_for(0s), std::future_status::timeout);
    proxy.stall_requests(false);
    EXPECT_GT(stuck.get().fence(), 0u);
}
