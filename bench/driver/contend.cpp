#include <hiredis/hiredis.h>
#include <poll.h>

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

// The least a client that waits instead of polling can do, with no library logic: SET NX and
// a fence in one script; refused, it waits for a message on the name's channel (subscribed
// for the whole run, so none is missed: they queue in its socket), then tries again; the
// release deletes its own key and publishes. Every waiter is woken (a herd of 7 at most here).
// Scenario 3's limit for a design that does not poll, beside raw hiredis's busy retry.
class NotifiedRaw {
  public:
    NotifiedRaw(int port, const std::string& key, int id)
        : cmd_(port),
          sub_(redisConnect("127.0.0.1", port)),
          key_(key),
          fence_(key + ":fence"),
          chan_(key + ":released"),
          token_("token-" + std::to_string(id)) {
        if (!sub_ || sub_->err) throw std::runtime_error("bench: cannot connect to redis");
        auto* r = static_cast<redisReply*>(redisCommand(sub_, "SUBSCRIBE %s", chan_.c_str()));
        if (!r) throw std::runtime_error("bench: SUBSCRIBE failed");
        freeReplyObject(r);
    }
    ~NotifiedRaw() { redisFree(sub_); }
    NotifiedRaw(const NotifiedRaw&) = delete;
    NotifiedRaw& operator=(const NotifiedRaw&) = delete;

    bool enter(std::int64_t until_ns) {
        static const std::string take =
            "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then "
            "return redis.call('INCR', KEYS[2]) end return 0";
        while (now_ns() < until_ns) {
            if (cmd_.cmd({"EVAL", take, "2", key_, fence_, token_, "30000"}) > 0) return true;
            wait_message(until_ns);
        }
        return false;
    }
    void leave() {
        static const std::string give =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) "
            "redis.call('PUBLISH', KEYS[2], '1') return 1 end return 0";
        cmd_.cmd({"EVAL", give, "2", key_, chan_, token_});
    }

  private:
    // One message (a release since the last look), or the run's end.
    void wait_message(std::int64_t until_ns) {
        void* r = nullptr;
        while (redisReaderGetReply(sub_->reader, &r) == REDIS_OK && r == nullptr) {
            pollfd p{.fd = sub_->fd, .events = POLLIN, .revents = 0};
            auto left_ms = std::max<std::int64_t>(0, (until_ns - now_ns()) / 1000000);
            if (::poll(&p, 1, int(left_ms)) <= 0) return;
            if (redisBufferRead(sub_) != REDIS_OK) throw std::runtime_error("bench: sub lost");
        }
        if (r) freeReplyObject(r);
    }

    Raw cmd_;
    redisContext* sub_;
    std::string key_, fence_, chan_, token_;
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
    std::optional<NotifiedRaw> notified;
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
    } else if (a.contender == "raw-notify") {
        notified.emplace(a.port, a.key, a.id);
        s.enter = [&](Clock::time_point) { return notified->enter(a.until_ns); };
        s.work = rmw;
        s.leave = [&] { notified->leave(); };
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
