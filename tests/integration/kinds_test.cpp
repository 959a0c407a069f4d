// One name, several kinds: exclusive locks and readers wait for each other, as flock -x/-s do;
// any other pair is refused at once, naming the kind in place, and writes nothing.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>

#include "acquire_options.hpp"
#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::LockMode;
using deadbolt::test::no_wait;
using deadbolt::test::RedisServer;

namespace {

enum class Outcome { taken, held, refused };

struct Kind {
    const char* name;
    const char* words;  // how an error names it when it holds the name
    // Takes the name and keeps it while the returned handle lives.
    std::function<std::shared_ptr<void>(deadbolt::Client&, const std::string&)> hold;
    // One attempt without waiting.
    std::function<Outcome(deadbolt::Client&, const std::string&)> attempt;
};

template <class F>
Outcome attempt_lease(F f) {
    try {
        auto lease = f();
        return lease.valid() ? Outcome::taken : Outcome::held;
    } catch (const deadbolt::LockError& e) {
        EXPECT_EQ(e.code(), errc::not_acquired) << e.what();
        return Outcome::held;
    }
}

std::vector<Kind> kinds() {
    auto mode_kind = [](const char* name, const char* words, LockMode mode) {
        return Kind{name, words,
                    [mode](deadbolt::Client& c, const std::string& n) {
                        return std::make_shared<deadbolt::Lease>(c.acquire(n, mode, {}));
                    },
                    [mode](deadbolt::Client& c, const std::string& n) {
                        return attempt_lease([&] { return c.acquire(n, mode, {}, no_wait()); });
                    }};
    };
    const char* exclusive = "an exclusive lock";
    return {
        mode_kind("Mutex", exclusive, LockMode::exclusive),
        mode_kind("FairMutex", exclusive, LockMode::fair),
        mode_kind("RWLock writer", exclusive, LockMode::write),
        mode_kind("RWLock reader", "RWLock readers", LockMode::shared),
        {"MultiLock", exclusive,
         [](deadbolt::Client& c, const std::string& n) {
             return std::make_shared<deadbolt::Lease>(c.acquire_all({n, n + "-2"}));
         },
         [](deadbolt::Client& c, const std::string& n) {
             return attempt_lease([&] { return c.acquire_all({n, n + "-3"}, {}, no_wait()); });
         }},
        {"ReentrantMutex", "a ReentrantMutex",
         [](deadbolt::Client& c, const std::string& n) {
             auto r =
                 std::make_shared<deadbolt::ReentrantMutex>(c.reentrant_mutex(n, {}, "holder"));
             r->lock();
             return std::shared_ptr<void>(r);
         },
         [](deadbolt::Client& c, const std::string& n) {
             return c.reentrant_mutex(n, {}, "other").try_lock() ? Outcome::taken : Outcome::held;
         }},
        {"Semaphore", "a Semaphore",
         [](deadbolt::Client& c, const std::string& n) {
             return std::make_shared<deadbolt::Lease>(c.permit_semaphore(n, 1).acquire());
         },
         [](deadbolt::Client& c, const std::string& n) {
             return c.permit_semaphore(n, 1).try_acquire().valid() ? Outcome::taken : Outcome::held;
         }},
        {"LeaderElection", "a LeaderElection",
         [](deadbolt::Client& c, const std::string& n) {
             return std::make_shared<deadbolt::Lease>(c.campaign(n, "v"));
         },
         [](deadbolt::Client& c, const std::string& n) {
             return attempt_lease([&] { return c.campaign(n, "w", {}, no_wait()); });
         }},
        {"CountDownLatch", "a CountDownLatch",
         [](deadbolt::Client& c, const std::string& n) {
             EXPECT_TRUE(c.latch(n).try_set_count(3));
             return std::shared_ptr<void>();
         },
         [](deadbolt::Client& c, const std::string& n) {
             return c.latch(n).try_set_count(2) ? Outcome::taken : Outcome::held;
         }},
        {"RateLimiter", "a RateLimiter",
         [](deadbolt::Client& c, const std::string& n) {
             EXPECT_TRUE(
                 c.rate_limiter(n, {.rate = 1, .per = 1h, .burst = 1}).try_acquire().allowed);
             return std::shared_ptr<void>();
         },
         [](deadbolt::Client& c, const std::string& n) {
             return c.rate_limiter(n, {.rate = 1, .per = 1h, .burst = 1}).try_acquire().allowed
                        ? Outcome::taken
                        : Outcome::held;
         }},
    };
}

bool exclusive_family(const std::string& k) {
    return k == "Mutex" || k == "FairMutex" || k == "RWLock writer" || k == "MultiLock";
}

}  // namespace

TEST(Kinds, EveryPairOnOneNameWaitsOrIsRefusedWithTheKindInPlace) {
    RedisServer srv;
    auto holder = deadbolt::Client::connect(srv.url());
    auto other = deadbolt::Client::connect(srv.url());
    int pair = 0;
    for (const auto& held : kinds()) {
        for (const auto& want : kinds()) {
            std::string held_name = held.name, want_name = want.name;
            const std::string name = "n" + std::to_string(pair++);
            auto keep = held.hold(holder, name);
            auto before = srv.raw().cmd({"DBSIZE"}).integer;
            std::string what = held_name + " holds, " + want_name + " tries";
            bool both_read = held_name == "RWLock reader" && want_name == "RWLock reader";
            bool wait = held_name == want_name ||
                        ((exclusive_family(held_name) || held_name == "RWLock reader") &&
                         (exclusive_family(want_name) || want_name == "RWLock reader"));
            try {
                Outcome o = want.attempt(other, name);
                EXPECT_TRUE(wait) << what << ": not refused";
                EXPECT_EQ(o, both_read ? Outcome::taken : Outcome::held) << what;
            } catch (const deadbolt::ServerError& e) {
                EXPECT_FALSE(wait) << what << ": " << e.what();
                EXPECT_EQ(e.code(), errc::wrong_type) << what;
                const std::string msg = e.what();
                EXPECT_NE(msg.find(std::string("holds ") + held.words), std::string::npos)
                    << what << ": " << msg;
                EXPECT_EQ(msg.find("delete"), std::string::npos) << msg;  // never advise it
                EXPECT_EQ(srv.raw().cmd({"DBSIZE"}).integer, before) << what << ": wrote";
            }
        }
    }
    EXPECT_GT(pair, 80);
}

TEST(Kinds, AForeignKeyIsAClearErrorForEveryKindAndStatus) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    srv.raw().cmd({"RPUSH", "listy", "a"});
    for (const auto& k : kinds()) {
        try {
            k.attempt(c, "listy");
            ADD_FAILURE() << k.name << " used a list";
        } catch (const deadbolt::ServerError& e) {
            EXPECT_EQ(e.code(), errc::wrong_type) << k.name;
            EXPECT_NE(std::string(e.what()).find("holds a list that deadbolt did not write"),
                      std::string::npos)
                << k.name << ": " << e.what();
        }
    }
    try {
        c.status("listy");
        ADD_FAILURE() << "status called a list free";
    } catch (const deadbolt::ServerError& e) {
        EXPECT_EQ(e.code(), errc::wrong_type) << e.what();
    }
    EXPECT_EQ(srv.raw().cmd({"LRANGE", "listy", "0", "-1"}).elements.size(), 1u);
}

TEST(Kinds, AMutexWaitsForReadersAndTakesTheNameWhenTheLastLeaves) {
    RedisServer srv;
    auto c = deadbolt::Client::connect(srv.url());
    auto r1 = c.acquire("mix", LockMode::shared, {});
    auto r2 = c.acquire("mix", LockMode::shared, {});
    EXPECT_THROW(c.acquire("mix", {}, no_wait()), deadbolt::LockError);
    r1.release();
    EXPECT_THROW(c.acquire("mix", {}, no_wait()), deadbolt::LockError);
    r2.release();
    auto m = c.acquire("mix", {}, no_wait());
    EXPECT_TRUE(m.valid());
    EXPECT_THROW(c.acquire("mix", LockMode::shared, {}, no_wait()), deadbolt::LockError);
}
