#include "locks.hpp"

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "clock_shim.h"
#include "deadbolt/deadbolt.hpp"
#include "history.hpp"

namespace deadbolt::torture {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

std::int64_t to_ns(Clock::time_point t) {
    // libstdc++'s steady_clock is CLOCK_MONOTONIC, the clock of the history.
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// The lease's clock runs off CLOCK_MONOTONIC through the worker's steered page, which a
// clock nemesis may slow down: the lease then believes in more validity than it has.
ClientOptions on_clock(const deadbolt_shim_clock* page) {
    ClientOptions o;
    if (page)
        o.clock = [page] {
            return Clock::time_point(std::chrono::nanoseconds(deadbolt_steer(page, now_ns())));
        };
    return o;
}

class DeadboltLock : public LockAdapter {
  public:
    DeadboltLock(const std::string& url, milliseconds ttl, const deadbolt_shim_clock* clock,
                 const std::string& kind)
        : client_(Client::connect(url, on_clock(clock))),
          ttl_(ttl),
          clock_(clock),
          kind_(kind_parts(kind).primitive) {
        MutexOptions o;
        o.ttl = ttl_;
        if (kind_ == "deadbolt-reentrant")
            reentrant_.emplace(client_.reentrant_mutex("torture", o));
        if (kind_ == "deadbolt-object") object_.emplace(client_.mutex("torture", o));
    }
    std::optional<Holding> acquire(milliseconds wait) override {
        std::error_code ec;
        MutexOptions o;
        o.ttl = ttl_;
        AcquireOptions how;
        how.deadline = Clock::now() + wait;
        if (reentrant_) {
            // Taken twice, as reentrant code does; the second holding must come at once.
            if (!reentrant_->try_lock_until(*how.deadline)) return std::nullopt;
            // Over Redlock a re-entry needs a majority too. When it fails (refused or an
            // error), give the outer holding back, or the handle would keep it (and report
            // its old fence) under every later acquisition.
            bool again = false;
            try {
                again = reentrant_->try_lock();
            } catch (...) {
                reentrant_->unlock();
                throw;
            }
            if (!again) {
                reentrant_->unlock();
                throw std::runtime_error("re-entry refused");
            }
            return Holding{reentrant_->lease().fence(), valid_until()};
        }
        if (object_) {
            // The same Mutex object each time: its claim is kept from one acquisition to the
            // next (SpareClaim), and a grant whose reply was lost is recorded as unknown.
            bool got = object_->try_lock_for(wait, ec);
            if (ec == errc::unknown_outcome) throw std::runtime_error(ec.message());
            say_if_wrong(ec, [&] { (void)object_->try_lock_for(wait); });
            if (!got) return std::nullopt;
            return Holding{object_->lease().fence(), valid_until()};
        }
        if (kind_ == "deadbolt") {
            lease_ = client_.acquire("torture", o, how, ec);
            // The grant may have happened with its reply lost: the worker records "unknown".
            if (ec == errc::unknown_outcome) throw std::runtime_error(ec.message());
            say_if_wrong(ec, [&] { lease_ = client_.acquire("torture", o, how); });
        } else {
            try {
                if (int n = capacity(kind_); n > 1)
                    lease_ = client_.permit_semaphore("torture", n, o).acquire(how);
                else if (kind_ == "deadbolt-multi")  // fenced writes use the first name's fence;
                    // one hash slot, so that a Redis Cluster can take them together
                    lease_ = client_.acquire_all({"torture", "{torture}-2", "{torture}-3"}, o, how);
                else if (kind_ == "deadbolt-leader")
                    lease_ = client_.campaign("torture", std::to_string(getpid()), o, how);
                else
                    lease_ = client_.acquire(
                        "torture", kind_ == "deadbolt-fair" ? LockMode::fair : LockMode::write, o,
                        how);
            } catch (const LockError& e) {
                if (e.code() != errc::not_acquired) throw;
                lease_ = Lease();
            } catch (const UsageError& e) {
                refused_as_wrong(e);
                lease_ = Lease();
            }
        }
        if (!lease_) return std::nullopt;
        return Holding{lease_.fence(), valid_until()};
    }
    // The validity the holder believes in, on the history's (true) clock. While its own clock
    // says the lease is valid, it holds at least until now. Past that, the claim is mapped back
    // at the clock's current rate (exact unless the rate changed since the claim was made).
    std::int64_t valid_until() override {
        std::int64_t real = now_ns();
        std::int64_t steered = clock_ ? deadbolt_steer(clock_, real) : real;
        double rate = clock_ ? deadbolt_steer_rate(clock_) : 1.0;
        const Lease& l = reentrant_ ? reentrant_->lease() : object_ ? object_->lease() : lease_;
        auto claim =
            real + static_cast<std::int64_t>(double(to_ns(l.valid_until()) - steered) / rate);
        return l.valid() ? std::max(claim, real) : claim;
    }
    void release() override {
        if (reentrant_) {
            reentrant_->unlock();
            reentrant_->unlock();
            return;
        }
        if (object_) {
            object_->unlock();
            return;
        }
        std::error_code ec;
        lease_.release(ec);
    }

  private:
    // A call deadbolt refuses as wrong (a TTL the engine cannot keep) fails every try, and the
    // run then tests nothing: say why, once per worker.
    void refused_as_wrong(const UsageError& e) {
        if (told_) return;
        told_ = true;
        std::fprintf(stderr, "torture worker %d: deadbolt refused the call: %s\n", getpid(),
                     e.what());
    }
    // A call refused as wrong (ec invalid_argument) is run again, throwing, for its message.
    template <class F>
    void say_if_wrong(const std::error_code& ec, F&& again) {
        if (ec != errc::invalid_argument || told_) return;
        try {
            again();
        } catch (const UsageError& e) {
            refused_as_wrong(e);
        }
    }

    Client client_;
    milliseconds ttl_;
    const deadbolt_shim_clock* clock_;
    std::string kind_;  // the primitive; the URL says where it lives
    Lease lease_;
    std::optional<ReentrantMutex> reentrant_;
    std::optional<Mutex> object_;  // deadbolt-object: one Mutex locked again and again
    bool told_ = false;            // refused_as_wrong said it
};

// The naive schemes, over plain hiredis, polling every 5 ms as their users do.
class Naive : public LockAdapter {
  public:
    Naive(std::uint16_t port, milliseconds ttl) : ttl_(ttl) {
        c_ = redisConnect("127.0.0.1", port);
        if (!c_ || c_->err) throw std::runtime_error("naive lock: cannot connect");
    }
    ~Naive() override { redisFree(c_); }
    std::optional<Holding> acquire(milliseconds wait) override {
        auto end = Clock::now() + wait;
        do {
            if (try_once()) return Holding{0, kForever};
            std::this_thread::sleep_for(milliseconds(5));
        } while (Clock::now() < end);
        return std::nullopt;
    }
    std::int64_t valid_until() override { return kForever; }
    void release() override { cmd("DEL torture"); }

  protected:
    virtual bool try_once() = 0;
    long long cmd(const char* fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        auto* r = static_cast<redisReply*>(redisvCommand(c_, fmt, ap));
        va_end(ap);
        if (!r) throw std::runtime_error("naive lock: connection lost");
        long long v = r->type == REDIS_REPLY_INTEGER  ? r->integer
                      : r->type == REDIS_REPLY_STRING ? std::atoll(r->str)
                      : r->type == REDIS_REPLY_STATUS ? 1
                                                      : 0;
        freeReplyObject(r);
        return v;
    }
    static long long wall_ms() {
        return std::chrono::duration_cast<milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }
    redisContext* c_;
    milliseconds ttl_;
};

// SET NX PX, released by a plain DEL: a late holder deletes someone else's lock.
class SetnxDel : public Naive {
    using Naive::Naive;
    bool try_once() override {
        return cmd("SET torture %d NX PX %lld", getpid(), static_cast<long long>(ttl_.count())) ==
               1;
    }
};

// INCR + EXPIRE: two steps, and a late holder's DEL frees someone else's lock.
class IncrExpire : public Naive {
    using Naive::Naive;
    bool try_once() override {
        if (cmd("INCR torture") != 1) return false;
        cmd("PEXPIRE torture %lld", static_cast<long long>(ttl_.count()));
        return true;
    }
};

// SETNX with a timestamp; an expired timestamp is taken over with GETSET.
class SetnxGetset : public Naive {
    using Naive::Naive;
    bool try_once() override {
        long long expires = wall_ms() + ttl_.count() + 1;
        if (cmd("SETNX torture %lld", expires) == 1) return true;
        if (cmd("GET torture") > wall_ms()) return false;
        return cmd("GETSET torture %lld", expires) < wall_ms();
    }
};

// SETNX without a TTL: a holder that dies (or stops) blocks everyone.
class SetnxNoTtl : public Naive {
    using Naive::Naive;
    bool try_once() override { return cmd("SETNX torture 1") == 1; }
};

// N of a kind "<prefix>N": 1 when kind has another prefix, 0 when N is not a number.
int count_suffix(const std::string& kind, std::string_view prefix) {
    if (kind.rfind(prefix, 0) != 0) return 1;
    try {
        return std::max(0, std::stoi(kind.substr(prefix.size())));
    } catch (const std::exception&) {
        return 0;
    }
}

}  // namespace

KindParts kind_parts(const std::string& k) {
    const std::string plain = "deadbolt-";
    if (k.rfind("deadbolt-redlock:", 0) == 0 || k == "deadbolt-sentinel" || k == "deadbolt-cluster")
        return {"deadbolt", k.substr(plain.size())};
    auto at = k.find('@');
    if (at == std::string::npos) return {k, ""};
    return {k.substr(0, at), k.substr(at + 1)};
}

bool uses_sentinel(const std::string& k) {
    return kind_parts(k).backend == "sentinel";
}

bool uses_cluster(const std::string& k) {
    return kind_parts(k).backend == "cluster";
}

bool uses_etcd(const std::string& k) {
    return kind_parts(k).backend == "etcd";
}

bool uses_zk(const std::string& k) {
    return kind_parts(k).backend == "zk";
}

std::string uses_database(const std::string& k) {
    auto b = kind_parts(k).backend;
    return b == "pg" || b == "mariadb" || b == "memcached" ? b : std::string();
}

bool uses_consensus(const std::string& k) {
    return uses_etcd(k) || uses_zk(k);
}

int lock_nodes(const std::string& k) {
    return count_suffix(kind_parts(k).backend, "redlock:");
}

int capacity(const std::string& k) {
    return count_suffix(kind_parts(k).primitive, "deadbolt-semaphore:");
}

bool known_lock(const std::string& k) {
    auto [p, backend] = kind_parts(k);
    if (p == "setnx-del" || p == "incr-expire" || p == "setnx-getset" || p == "setnx-nottl")
        return backend.empty();
    bool primitive = p == "deadbolt" || p == "deadbolt-object" || p == "deadbolt-fair" ||
                     p == "deadbolt-write" || p == "deadbolt-reentrant" || p == "deadbolt-multi" ||
                     p == "deadbolt-leader" || capacity(k) > 1;
    if (!primitive) return false;
    if (backend.empty() || backend == "sentinel" || backend == "cluster" || backend == "etcd")
        return true;
    if (backend == "zk") return true;
    // PostgreSQL keeps every primitive; MariaDB Mutex, FairMutex and MultiLock.
    if (backend == "pg") return true;
    if (backend == "mariadb")
        return p == "deadbolt" || p == "deadbolt-object" || p == "deadbolt-fair" ||
               p == "deadbolt-multi";
    // memcached (one server): Mutex, MultiLock, ReentrantMutex and semaphores.
    if (backend == "memcached")
        return p == "deadbolt" || p == "deadbolt-object" || p == "deadbolt-multi" ||
               p == "deadbolt-reentrant" || capacity(k) > 1;
    // Redlock refuses what it cannot keep (a FIFO queue, permit counts).
    return lock_nodes(k) >= 3 && p != "deadbolt-fair" && capacity(k) == 1;
}

bool promises_safety(const std::string& k) {
    return k.rfind("deadbolt", 0) == 0;
}

bool hands_out_fences(const std::string& k) {
    return promises_safety(k) && capacity(k) == 1;
}

std::unique_ptr<LockAdapter> make_lock(const std::string& kind, const std::string& url,
                                       std::uint16_t port, milliseconds ttl,
                                       const deadbolt_shim_clock* clock) {
    if (promises_safety(kind) && known_lock(kind))
        return std::make_unique<DeadboltLock>(url, ttl, clock, kind);
    if (kind == "setnx-del") return std::make_unique<SetnxDel>(port, ttl);
    if (kind == "incr-expire") return std::make_unique<IncrExpire>(port, ttl);
    if (kind == "setnx-getset") return std::make_unique<SetnxGetset>(port, ttl);
    if (kind == "setnx-nottl") return std::make_unique<SetnxNoTtl>(port, ttl);
    throw std::invalid_argument("unknown lock kind '" + kind + "'");
}

}  // namespace deadbolt::torture
