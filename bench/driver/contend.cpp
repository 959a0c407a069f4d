#include <algorithm>
#include <cstdio>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "backends/redis/scripts.hpp"
#include "deadbolt/deadbolt.hpp"
#include "scenarios.hpp"

namespace deadbolt::bench {
namespace {

// One process's way into and out of the critical section, and what it does inside.
struct Section {
    std::function<bool(Clock::time_point)> enter;  // false: not obtained by the deadline
    std::function<void()> work;
    std::function<void()> leave;
};

}  // namespace

int contend(const Args& a) {
    Raw data(a.port);  // the counter the critical section increments
    std::string counter = a.key + ":counter", inside = a.key + ":inside";
    long writes = 0, violations = 0;
    auto rmw = [&] {
        data.cmd({"SET", counter, std::to_string(data.cmd({"GET", counter}) + 1)});
        ++writes;
    };
    std::unique_ptr<Client> client;
    std::unique_ptr<Raw> raw;
    std::optional<Mutex> m;
    std::optional<FairMutex> fair;
    std::optional<RWLock> rw;
    std::optional<Semaphore> sem;
    std::optional<ReentrantMutex> re;
    std::optional<MultiLock> multi;
    std::optional<LeaderElection> election;
    Section s;
    if (a.contender == "deadbolt") {
        // The lock on etcd (--etcd), ZooKeeper (--zk) or the counter's server.
        client = std::make_unique<Client>(Client::connect(
            a.etcd.empty() && a.zk.empty() ? "redis://127.0.0.1:" + std::to_string(a.port)
                                           : client_url(a)));
        s.work = rmw;
        if (a.primitive == "mutex") {
            m.emplace(client->mutex(a.key));
            s.enter = [&](Clock::time_point d) { return m->try_lock_until(d); };
            s.leave = [&] { m->unlock(); };
        } else if (a.primitive == "fair") {
            fair.emplace(client->fair_mutex(a.key));
            s.enter = [&](Clock::time_point d) { return fair->try_lock_until(d); };
            s.leave = [&] { fair->unlock(); };
        } else if (a.primitive == "reentrant") {
            re.emplace(client->reentrant_mutex(a.key));
            s.enter = [&](Clock::time_point d) {
                return re->try_lock_until(d) && (re->lock(), true);  // and once more, inside
            };
            s.leave = [&] {
                re->unlock();
                re->unlock();
            };
        } else if (a.primitive == "multi") {
            multi.emplace(client->multi_lock({a.key, a.key + ":second"}));
            s.enter = [&](Clock::time_point d) { return multi->try_lock_until(d); };
            s.leave = [&] { multi->unlock(); };
        } else if (a.primitive == "leader") {
            election.emplace(client->election(a.key));
            s.enter = [&](Clock::time_point d) {
                AcquireOptions how;
                how.deadline = d;
                try {
                    election->campaign(std::to_string(a.id), how);
                    return true;
                } catch (const LockError& e) {
                    if (e.code() != errc::not_acquired) throw;
                    return false;
                }
            };
            s.leave = [&] { election->resign(); };
        } else if (a.primitive == "rw") {
            rw.emplace(client->rwlock(a.key));
            bool writer = a.id % 4 == 0;
            s.enter = [&, writer](Clock::time_point d) {
                return writer ? rw->try_lock_until(d) : rw->try_lock_shared_until(d);
            };
            s.leave = [&, writer] { writer ? rw->unlock() : rw->unlock_shared(); };
            if (!writer)
                s.work = [&] {
                    if (data.cmd({"GET", counter}) != data.cmd({"GET", counter})) ++violations;
                };
        } else if (a.primitive == "sem4") {
            sem.emplace(client->semaphore(a.key, 4));
            s.enter = [&](Clock::time_point d) { return sem->try_acquire_until(d); };
            s.leave = [&] { sem->release(); };
            s.work = [&] {
                if (data.cmd({"INCR", inside}) > 4) ++violations;
                data.cmd({"DECR", inside});
            };
        } else {
            throw std::invalid_argument("unknown --primitive " + a.primitive);
        }
    } else {
        raw = std::make_unique<Raw>(a.port);
        const auto& acq = detail::acquire_script();
        const auto& rel = detail::release_script();
        raw->cmd({"SCRIPT", "LOAD", std::string(acq.source)});
        raw->cmd({"SCRIPT", "LOAD", std::string(rel.source)});
        std::string fence = "{" + a.key + "}:fence", chan = "{" + a.key + "}:released",
                    line = "{" + a.key + "}:waiters",
                    token = "token-" + std::to_string(a.id) + "-0123456789abcdef";
        s.enter = [&, fence, line, chan, token](Clock::time_point) {
            bool ok = false;
            while (!ok && now_ns() < a.until_ns)  // a busy retry: no sleep at all
                ok = raw->cmd({"EVALSHA", acq.sha1, "3", a.key, fence, line, token, "30000",
                               "90000", chan, "", ""}) == 1;
            return ok;
        };
        s.work = rmw;
        s.leave = [&, line, token, chan] {
            raw->cmd({"EVALSHA", rel.sha1, "2", a.key, line, token, chan});
        };
    }
    // Every process starts contending at once, however long each took to start up.
    std::this_thread::sleep_for(
        std::chrono::nanoseconds(std::max<std::int64_t>(0, a.start_ns - now_ns())));
    auto deadline = Clock::now() + std::chrono::nanoseconds(a.until_ns - now_ns());
    std::string events;
    long failures = 0, n = 0;
    double cpu0 = cpu_seconds();
    while (now_ns() < a.until_ns) {
        auto invoked = now_ns();
        if (!s.enter(deadline)) {
            ++failures;
            continue;
        }
        auto got = now_ns();
        s.work();
        auto released = now_ns();
        s.leave();
        events += (n++ ? ",[" : "[") + std::to_string(invoked) + "," + std::to_string(got) + "," +
                  std::to_string(released) + "]";
    }
    std::printf(
        "{\"id\":%d,\"failures\":%ld,\"writes\":%ld,\"violations\":%ld,\"cpu_s\":%.3f,"
        "\"events\":[%s]}\n",
        a.id, failures, writes, violations, cpu_seconds() - cpu0, events.c_str());
    return 0;
}

}  // namespace deadbolt::bench
