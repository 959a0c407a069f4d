// Redis ACL users: a refused command leaves nothing behind and is named; a user granted exactly
// what `deadbolt acl` prints can use every primitive; the README's recipe is that line.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "acquire_options.hpp"
#include "deadbolt/deadbolt.hpp"
#include "redis_server.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::no_wait;
using deadbolt::test::RedisServer;

namespace {

std::string url_for(const RedisServer& srv, const std::string& user, const std::string& query) {
    return "redis://" + user + ":pw@127.0.0.1:" + std::to_string(srv.port()) + query;
}

// The ACL SETUSER line as words, with the password filled in.
std::vector<std::string> setuser(const std::string& user, const std::string& prefix) {
    std::istringstream in(deadbolt::acl_setuser_command(user, prefix));
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w == ">PASSWORD" ? ">pw" : w);
    return words;
}

}  // namespace

TEST(Acl, ConnectNamesEveryGrantANamedUserLacks) {
    RedisServer srv;
    srv.raw().cmd(
        {"ACL", "SETUSER", "u", "on", ">pw", "~*", "resetchannels", "+@all", "-time", "-pexpire"});
    try {
        deadbolt::Client::connect(url_for(srv, "u", "?prefix=app:"));
        ADD_FAILURE() << "connected without TIME and PEXPIRE";
    } catch (const deadbolt::ServerError& e) {
        EXPECT_EQ(e.code(), errc::permission_denied) << e.what();
        const std::string what = e.what();
        EXPECT_NE(what.find("lacks +pexpire +publish"), std::string::npos) << what;
        EXPECT_NE(what.find("{app:deadbolt-acl-probe}:released"), std::string::npos) << what;
        EXPECT_NE(what.find("+time"), std::string::npos) << what;
        EXPECT_NE(what.find("deadbolt acl --prefix"), std::string::npos) << what;
    }
    EXPECT_EQ(srv.raw().cmd({"DBSIZE"}).integer, 0);
}

TEST(Acl, AScriptRefusedACommandNamesItAndWritesNothing) {
    RedisServer srv;
    // An ACL that changes after connect: TIME once came after the acquire's SET, so the key
    // stayed for the whole TTL and everyone else was told it was held.
    for (std::string denied : {"time", "set", "pexpire"}) {
        srv.raw().cmd({"ACL", "SETUSER", "u", "reset", "on", ">pw", "~*", "&*", "+@all"});
        auto c = deadbolt::Client::connect(url_for(srv, "u", ""));
        srv.raw().cmd({"ACL", "SETUSER", "u", "-" + denied});
        for (auto mode : {deadbolt::LockMode::exclusive, deadbolt::LockMode::fair,
                          deadbolt::LockMode::write, deadbolt::LockMode::shared}) {
            try {
                c.acquire("job", mode, {}, no_wait());
                // A free lock's grant: SET for every kind, PEXPIRE for a reader.
                bool shared = mode == deadbolt::LockMode::shared;
                if (denied != "pexpire" || shared) ADD_FAILURE() << "acquired without " << denied;
            } catch (const deadbolt::ServerError& e) {
                EXPECT_EQ(e.code(), errc::permission_denied) << e.what();
                std::string upper = denied;
                for (auto& ch : upper) ch = static_cast<char>(std::toupper(ch));
                EXPECT_NE(std::string(e.what()).find("may not run " + upper), std::string::npos)
                    << e.what();
                EXPECT_EQ(srv.raw().cmd({"DBSIZE"}).integer, 0) << denied << ": " << e.what();
            }
            srv.raw().cmd({"FLUSHALL"});
        }
    }
}

TEST(Acl, AReleaseWhoseWakeUpIsRefusedKeepsTheLockWhole) {
    RedisServer srv;
    auto raw = srv.raw();
    srv.raw().cmd({"ACL", "SETUSER", "u", "on", ">pw", "~*", "&*", "+@all"});
    auto c = deadbolt::Client::connect(url_for(srv, "u", ""));
    auto lease = c.acquire("job", {}, no_wait());
    // Someone waits in line: a client of another user, who may use every channel.
    auto other = deadbolt::Client::connect(srv.url());
    auto waiter = std::async(std::launch::async, [&] {
        std::error_code ec;
        other.acquire("job", {}, {.deadline = std::chrono::steady_clock::now() + 3s}, ec);
        return ec;
    });
    for (int i = 0; i < 500 && raw.cmd({"ZCARD", "{job}:waiters"}).integer == 0; ++i)
        std::this_thread::sleep_for(10ms);
    ASSERT_EQ(raw.cmd({"ZCARD", "{job}:waiters"}).integer, 1);
    raw.cmd({"ACL", "SETUSER", "u", "resetchannels"});
    std::error_code ec;
    lease.release(ec);
    EXPECT_EQ(ec, errc::permission_denied) << ec.message();
    // The wake-up was refused before anything was written: the key is still the holder's, not
    // half gone, and the waiter keeps its place.
    EXPECT_EQ(raw.cmd({"GET", "job"}).str, lease.token());
    EXPECT_EQ(raw.cmd({"ZCARD", "{job}:waiters"}).integer, 1);
    EXPECT_EQ(waiter.get(), errc::not_acquired);
}

TEST(Acl, AUserGrantedExactlyTheDerivedListUsesEveryPrimitive) {
    RedisServer srv;
    srv.raw().cmd(setuser("locker", "app:"));
    const std::string url = url_for(srv, "locker", "?prefix=app:");
    auto c = deadbolt::Client::connect(url);
    auto other = deadbolt::Client::connect(url);
    // Mutex, with a waiter woken by the release (in the name's line, told on its client's
    // inbox channel); one name with a stray '}' uses the {s<n>} form of auxiliary keys.
    for (std::string name : {"job", "odd}name"}) {
        auto held = c.acquire(name);
        auto waiter = std::async(std::launch::async, [&] {
            return other.acquire(name, {}, {.deadline = std::chrono::steady_clock::now() + 10s});
        });
        std::this_thread::sleep_for(100ms);
        EXPECT_EQ(c.status(name).holders, 1);
        held.release();
        EXPECT_GT(waiter.get().fence(), held.fence());
    }
    // FairMutex with a queued waiter (the queue, the grant channel).
    {
        auto f = c.acquire("fair", deadbolt::LockMode::fair, {});
        auto waiter = std::async(std::launch::async, [&] {
            return other.acquire("fair", deadbolt::LockMode::fair, {},
                                 {.deadline = std::chrono::steady_clock::now() + 10s});
        });
        std::this_thread::sleep_for(100ms);
        f.release();
        EXPECT_TRUE(waiter.get().valid());
    }
    {
        auto r = c.reentrant_mutex("re");
        r.lock();
        r.lock();
        r.unlock();
        r.unlock();
    }
    {
        auto rw = c.rwlock("rw");
        rw.lock_shared();
        rw.unlock_shared();
        rw.lock();
        rw.unlock();
    }
    {
        auto s = c.semaphore("sem", 2);
        s.acquire();
        s.release();
        auto pool = c.permit_semaphore("pool", 1);
        auto p = pool.acquire();
        EXPECT_TRUE(pool.release(p.token()));
    }
    {
        auto latch = c.latch("latch");
        EXPECT_TRUE(latch.try_set_count(1));
        EXPECT_TRUE(latch.count_down());
        EXPECT_TRUE(latch.wait_for(1s));
    }
    {
        auto both = c.multi_lock({"a", "b"});
        both.lock();
        both.unlock();
    }
    {
        auto rl = c.rate_limiter("rate", {.rate = 10, .per = 1s, .burst = 2});
        EXPECT_TRUE(rl.try_acquire().allowed);
    }
    {
        auto e = c.election("lead");
        auto& term = e.campaign("me");
        EXPECT_GT(term.fence(), 0u);
        e.proclaim("me too");
        EXPECT_EQ(e.leader().value, "me too");
        e.resign();
    }
    {
        auto lease = c.acquire("fenced");
        EXPECT_TRUE(c.fenced_set("app:data", "v", lease.fence()).accepted);
    }
    // Nothing outside the prefix's patterns was needed, and everything it wrote expires.
    auto keys = srv.raw().cmd({"KEYS", "*"});
    for (const auto& k : keys.elements)
        EXPECT_TRUE(k.str.find("app:") != std::string::npos) << k.str;
}

TEST(Acl, TheReadmeRecipeIsWhatDeadboltAclPrints) {
    std::ifstream in(std::string(DEADBOLT_SOURCE_DIR) + "/README.md");
    std::stringstream readme;
    readme << in.rdbuf();
    EXPECT_NE(readme.str().find(deadbolt::acl_setuser_command("locker", "app:")), std::string::npos)
        << "README's ACL recipe differs from:\n"
        << deadbolt::acl_setuser_command("locker", "app:");
}
