// CountDownLatch on ZooKeeper (Curator has no such recipe): the persistent znode of the
// latch's name holds "<count> <ttl ms>". ZooKeeper keeps no TTL on a plain node (its TTL
// nodes need a server setting most ensembles lack), so the latch opens by itself once its
// creation time (the server's clock) plus ttl has passed by the reader's wall clock: machines
// with skewed clocks see it open that much early or late. Counting down is a compare-and-set
// on the node's version; the last count deletes it, as does the first reader after its
// expiry. Waiters watch the node and wake at its expiry too.
#include <fmt/format.h>

#include <charconv>

#include "backends/zookeeper/paths.hpp"
#include "backends/zookeeper/store.hpp"
#include "backends/zookeeper/wake.hpp"
#include "core/watch.hpp"

namespace deadbolt::detail {
namespace {

// Tries of a count-down that other count-downs keep beating to the node.
constexpr int kCasTries = 64;

// A latch's node as read.
struct LatchNode {
    bool there = false;
    std::int64_t count = 0;
    std::int64_t ttl_ms = 0;
    std::chrono::milliseconds left{-1};  // until it opens by itself
    int version = 0;
};

// The latch's znode, or why name has none.
Status path_of(const std::string& name, std::string& path) {
    std::string why;
    path = znode_of(name, why);
    return path.empty() ? Status::error(errc::invalid_argument, why) : Status{};
}

Status parse(const std::string& name, const ZkReply& r, LatchNode& out) {
    const char* p = r.data.data();
    const char* end = p + r.data.size();
    std::int64_t count = 0, ttl = 0;
    auto a = std::from_chars(p, end, count);
    bool ok = a.ec == std::errc() && a.ptr < end && *a.ptr == ' ' && count >= 0;
    if (ok) {
        auto b = std::from_chars(a.ptr + 1, end, ttl);
        ok = b.ec == std::errc() && b.ptr == end && ttl > 0;
    }
    if (!ok)
        return Status::error(errc::wrong_type,
                             fmt::format("znode of latch '{}' holds something that is not a "
                                         "latch's \"<count> <ttl ms>\"",
                                         name));
    auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    out.there = true;
    out.count = count;
    out.ttl_ms = ttl;
    out.left = std::chrono::milliseconds(std::max<std::int64_t>(r.stat.ctime + ttl - now_ms, 0));
    out.version = r.stat.version;
    return {};
}

// The latch's node now; an expired one is deleted and reads as open.
Status read(ZkSession& s, const std::string& name, const std::string& path, Clock::time_point by,
            LatchNode& out) {
    out = {};
    auto r = s.get(path, by);
    if (r.rc == ZNONODE) return {};
    if (!r.ok()) return s.fail(r, fmt::format("reading latch '{}'", name), false);
    if (Status st = parse(name, r, out); !st.ok()) return st;
    if (out.left.count() > 0) return {};
    auto gone = s.remove(path, by, out.version);
    if (!gone.ok() && gone.rc != ZNONODE && gone.rc != ZBADVERSION)
        return s.fail(gone, fmt::format("deleting expired latch '{}'", name), true);
    out = {};
    return {};
}

// The wake-up of a latch's waiters: a watch on its node, set again after each look that
// follows a fired one (a watch fires once).
class NodeWaker final : public Waker {
  public:
    NodeWaker(std::shared_ptr<ZkSession> s, std::string path, std::stop_token cancel)
        : s_(std::move(s)), path_(std::move(path)), cancel_(std::move(cancel)) {}
    ~NodeWaker() override { NodeWaker::disarm(); }
    NodeWaker(const NodeWaker&) = delete;
    NodeWaker& operator=(const NodeWaker&) = delete;

    Status arm(Clock::time_point until) override {
        disarm();
        wake_->reset();
        watch_.session = s_;
        auto r = s_->watch(
            path_, until, [w = wake_] { w->fire(); }, watch_.id);
        if (!r.ok() && r.rc != ZNONODE) return s_->fail(r, "watching a latch", false);
        armed_ = true;
        return {};
    }
    /// Before a look: a watch that fired is set again, so the look sees what it guards.
    Status rearm(Clock::time_point by) { return armed_ && wake_->fired() ? arm(by) : Status{}; }
    void disarm() noexcept override {
        watch_.drop();
        armed_ = false;
    }
    void wait(Clock::time_point until) override { wake_->wait(until, cancel_); }

  private:
    std::shared_ptr<ZkSession> s_;
    std::string path_;
    std::stop_token cancel_;
    std::shared_ptr<ZkWake> wake_ = std::make_shared<ZkWake>();
    ZkWatchRef watch_;
    bool armed_ = false;
};

}  // namespace

Status ZkStore::latch_set(const std::string& name, std::int64_t count,
                          std::chrono::milliseconds ttl, bool& set) {
    set = false;
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    std::string path;
    if (Status st = path_of(name, path); !st.ok()) return st;
    auto data = fmt::format("{} {}", count, ttl.count());
    for (int round = 0; round < 3; ++round) {
        auto r = s->create(path, data, ZOO_PERSISTENT, deadline());
        if (r.ok()) {
            set = true;
            return {};
        }
        if (r.rc == ZNONODE) {  // a parent is missing
            if (Status st = make_dirs(*s, path.substr(0, path.rfind('/')), deadline()); !st.ok())
                return st;
            continue;
        }
        if (r.rc != ZNODEEXISTS) return s->fail(r, fmt::format("setting latch '{}'", name), true);
        LatchNode now;
        if (Status st = read(*s, name, path, deadline(), now); !st.ok() || now.there) return st;
    }
    return {};
}

Status ZkStore::latch_count(const std::string& name, std::int64_t& count) {
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    std::string path;
    if (Status st = path_of(name, path); !st.ok()) return st;
    LatchNode now;
    Status st = read(*s, name, path, deadline(), now);
    count = now.count;
    return st;
}

Status ZkStore::latch_count_down(const std::string& name, bool& opened) {
    opened = false;
    std::shared_ptr<ZkSession> s;
    if (Status st = session(s); !st.ok()) return st;
    std::string path;
    if (Status st = path_of(name, path); !st.ok()) return st;
    for (int i = 0; i < kCasTries; ++i) {
        LatchNode now;
        if (Status st = read(*s, name, path, deadline(), now); !st.ok() || !now.there)
            return st;  // open already (or never set)
        auto r = now.count <= 1 ? s->remove(path, deadline(), now.version)
                                : s->set(path, fmt::format("{} {}", now.count - 1, now.ttl_ms),
                                         now.version, deadline());
        if (r.ok()) {
            opened = now.count <= 1;
            return {};
        }
        if (r.rc != ZBADVERSION && r.rc != ZNONODE)
            return s->fail(r, fmt::format("counting latch '{}' down", name), true);
    }
    return Status::error(errc::busy, fmt::format("latch '{}' is counted down by too many at "
                                                 "once to win a turn; try again",
                                                 name));
}

bool ZkStore::latch_wait(const std::string& name, const AcquireOptions& how) {
    std::shared_ptr<ZkSession> s;
    session(s).throw_if_error();
    std::string path;
    path_of(name, path).throw_if_error();
    NodeWaker waker(s, path, how.cancel);
    auto look = [&](Look& found) {
        if (Status st = waker.rearm(deadline()); !st.ok()) return st;
        LatchNode now;
        Status st = read(*s, name, path, deadline(), now);
        found.done = !now.there || now.count == 0;
        found.ttl = now.left;  // its expiry announces nothing: wake then
        return st;
    };
    return watch(*this, waker, false, look, how, std::chrono::milliseconds(0));
}

}  // namespace deadbolt::detail
