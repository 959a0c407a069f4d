#include "backends/zookeeper/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "backends/zookeeper/descriptors.hpp"
#include "backends/zookeeper/reach.hpp"

namespace deadbolt::detail {

struct ZkSession::Call {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    ZkReply r;
    // A multi's operations and results: the C client reads and fills them until it
    // completes, whether or not the caller still waits.
    std::vector<std::string> texts;
    std::vector<zoo_op_t> ops;
    std::vector<zoo_op_result_t> results;

    // The completion's reference: the caller may have stopped waiting.
    static void* ref(const std::shared_ptr<Call>& c) { return new std::shared_ptr<Call>(c); }
    template <class F>
    static void finish(const void* data, int rc, F fill) {
        std::unique_ptr<std::shared_ptr<Call>> c(
            static_cast<std::shared_ptr<Call>*>(const_cast<void*>(data)));
        std::lock_guard lk((*c)->m);
        (*c)->r.rc = rc;
        if (rc == ZOK) fill((*c)->r);
        (*c)->done = true;
        (*c)->cv.notify_all();
    }

    // The C client's completions, one per shape of reply.
    static void answered(int rc, const void* d) {
        finish(d, rc, [](ZkReply&) {});
    }
    static void synced(int rc, const char* /*path*/, const void* d) { answered(rc, d); }
    static void stat(int rc, const Stat* st, const void* d) {
        finish(d, rc, [&](ZkReply& r) {
            if (st) r.stat = *st;
        });
    }
    static void listed(int rc, const String_vector* names, const Stat* st, const void* d) {
        finish(d, rc, [&](ZkReply& r) {
            if (st) r.stat = *st;
            for (int i = 0; names && i < names->count; ++i) r.children.emplace_back(names->data[i]);
        });
    }
};

namespace {

// The C client logs to stderr unless a handle has a callback of its own; a library must not,
// and its lines (timestamps, "ZOO_WARN@zookeeper_interest...") are no message for a user:
// every handle's lines go here, to nobody. What went wrong is told by deadbolt's own errors.
void drop_log(const char* /*line*/) {}

// How long a first connect waits for its session before it asks the servers itself whether
// they take a TCP connection: a session on a live ensemble comes well within it.
constexpr std::chrono::milliseconds kProbeAfter{20};

// "a: connection refused; b: no route to host" for the servers that were not reached.
std::string not_reached(const std::vector<Reached>& all) {
    std::string out;
    for (const auto& r : all)
        if (!r.accepted && !r.why.empty())
            out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", r.server, r.why);
    return out;
}

}  // namespace

template <class Start>
ZkSession::Pending ZkSession::begin(Start start) {
    Pending p{std::make_shared<Call>(), ZOK};
    auto* ref = Call::ref(p.call);
    if (p.rc = start(ref); p.rc != ZOK)  // not sent: the completion will not run
        delete static_cast<std::shared_ptr<Call>*>(ref);
    return p;
}

ZkReply ZkSession::await(const Pending& p, Clock::time_point by) {
    ZkReply r;
    if (p.rc != ZOK) {
        r.rc = p.rc;
        return r;
    }
    std::unique_lock lk(p.call->m);
    p.call->cv.wait_until(lk, by, [&] { return p.call->done; });
    if (!p.call->done) return r;
    return p.call->r;
}

template <class Start>
ZkReply ZkSession::call(Clock::time_point by, Start start) {
    return await(begin(start), by);
}

Status ZkSession::open(const ZkUrl& url, std::chrono::milliseconds asked,
                       std::shared_ptr<ZkSession>& out) {
    static std::once_flag quiet;
    std::call_once(quiet, [] { zoo_set_debug_level(ZOO_LOG_LEVEL_WARN); });
    std::shared_ptr<ZkSession> s(new ZkSession());
    s->servers_ = url.describe();
    if (url.acl == ZkAcl::creator) {
        s->creator_read_[0] = {ZOO_PERM_ALL, ZOO_AUTH_IDS};
        s->creator_read_[1] = {ZOO_PERM_READ, ZOO_ANYONE_ID_UNSAFE};
        s->creator_read_vector_ = {2, s->creator_read_};
        s->acl_ = &s->creator_read_vector_;
    }
    for (const auto& server : url.servers) s->ports_.push_back(server.port);
    auto before = open_descriptors();
    const auto by = Clock::now() + url.options.connect_timeout;
    s->zh_ = zookeeper_init2(url.hosts().c_str(), &ZkSession::on_event,
                             static_cast<int>(asked.count()), nullptr, s.get(), 0, &drop_log);
    if (!s->zh_) {  // it resolves every name first: one it cannot is the usual reason
        auto why = not_reached(reach(url.servers, by));
        return Status::error(errc::connect_failed,
                             fmt::format("cannot start a ZooKeeper client for {}: {}", s->servers_,
                                         why.empty() ? std::strerror(errno) : why));
    }
    if (!s->made_by(std::min(by, Clock::now() + kProbeAfter))) {
        // The C client tries server after server until it is closed and tells nobody why:
        // ask the servers directly whether they take a connection at all.
        auto reached = reach(url.servers, by);
        bool any = std::ranges::any_of(reached, &Reached::accepted);
        if (!any && !s->made_by(Clock::now()))
            return Status::error(
                errc::connect_failed,
                fmt::format("cannot reach any ZooKeeper server of {}: {}; check that the "
                            "ensemble runs and the URL names its client ports",
                            s->servers_, not_reached(reached)));
        if (!s->made_by(by)) {
            std::string took;
            for (const auto& r : reached)
                if (r.accepted) took += (took.empty() ? "" : ", ") + r.server;
            auto others = not_reached(reached);
            std::lock_guard lk(s->m_);
            if (s->state_ == ZOO_AUTH_FAILED_STATE)
                return Status::error(
                    errc::auth_failed,
                    fmt::format("ZooKeeper ({}) refused this client's credentials", s->servers_));
            return Status::error(
                errc::connect_failed,
                fmt::format("no ZooKeeper session with {} within {} ms: {} took a TCP "
                            "connection but made no session (another service's port, such as "
                            "Redis's or PostgreSQL's, or an ensemble without a quorum){}{}; "
                            "check the URL's ports",
                            s->servers_, url.options.connect_timeout.count(),
                            took.empty() ? "a server" : took, others.empty() ? "" : "; ", others));
        }
    }
    close_new_on_exec(before);  // the C client's pipe and first socket
    s->id_ = zoo_client_id(s->zh_)->client_id;
    s->timeout_ = std::chrono::milliseconds(zoo_recv_timeout(s->zh_));
    if (!url.options.username.empty()) {
        auto cred = url.options.username + ":" + url.options.password;
        auto r = call(by, [&](void* ref) {
            return zoo_add_auth(s->zh_, "digest", cred.data(), static_cast<int>(cred.size()),
                                &Call::answered, ref);
        });
        if (!r.ok())
            return Status::error(errc::auth_failed,
                                 fmt::format("ZooKeeper ({}) refused digest auth for user '{}': {}",
                                             s->servers_, url.options.username, zerror(r.rc)));
    }
    auto root = s->exists("/", by);
    if (root.rc == ZNONODE)
        return Status::error(
            errc::invalid_argument,
            fmt::format("the chroot '{}' does not exist on ZooKeeper ({}): create it (zkCli.sh "
                        "create {}) or leave it out of the URL",
                        url.chroot, s->servers_, url.chroot));
    if (!root.ok()) return s->fail(root, "reading the chroot", false);
    out = std::move(s);
    return {};
}

bool ZkSession::made_by(Clock::time_point by) {
    std::unique_lock lk(m_);
    cv_.wait_until(lk, by, [&] {
        return state_ == ZOO_CONNECTED_STATE || state_ == ZOO_EXPIRED_SESSION_STATE ||
               state_ == ZOO_AUTH_FAILED_STATE;
    });
    return state_ == ZOO_CONNECTED_STATE;
}

ZkSession::~ZkSession() {
    set_on_state({});
    if (zh_) zookeeper_close(zh_);  // joins the C client's threads: nothing calls us after
}

void ZkSession::on_event(zhandle_t* /*zh*/, int type, int state, const char* /*path*/, void* ctx) {
    if (type == ZOO_SESSION_EVENT) static_cast<ZkSession*>(ctx)->state_changed(state);
}

void ZkSession::state_changed(int state) {
    std::vector<std::function<void(int)>> woken;
    {
        std::lock_guard lk(m_);
        state_ = state;
        cv_.notify_all();
        if (state == ZOO_EXPIRED_SESSION_STATE)
            for (auto& [id, w] : watches_)
                if (w->fired) woken.push_back(std::exchange(w->fired, {}));
    }
    for (auto& f : woken) f(ZOO_SESSION_EVENT);
    if (state == ZOO_CONNECTED_STATE) close_peers_on_exec(ports_);  // a new socket each time
    std::lock_guard lk(cb_m_);
    if (on_state_) on_state_();
}

void ZkSession::set_on_state(std::function<void()> f) {
    std::lock_guard lk(cb_m_);
    on_state_ = std::move(f);
}

bool ZkSession::expired() const {
    std::lock_guard lk(m_);
    return state_ == ZOO_EXPIRED_SESSION_STATE || state_ == ZOO_AUTH_FAILED_STATE;
}

ZkSession::Pending ZkSession::begin_create(const std::string& path, std::string_view data,
                                           int mode) {
    return begin([&](void* ref) {
        return zoo_acreate2(
            zh_, path.c_str(), data.data(), static_cast<int>(data.size()), acl_, mode,
            [](int rc, const char* made, const Stat* st, const void* d) {
                Call::finish(d, rc, [&](ZkReply& r) {
                    r.path = made ? made : "";
                    if (st) r.stat = *st;
                });
            },
            ref);
    });
}

ZkReply ZkSession::create(const std::string& path, std::string_view data, int mode,
                          Clock::time_point by) {
    return await(begin_create(path, data, mode), by);
}

std::pair<ZkReply, ZkReply> ZkSession::create_and_list(const std::string& path,
                                                       std::string_view data, int mode,
                                                       const std::string& dir,
                                                       Clock::time_point by) {
    // One session's requests are answered in order: the list sees the node just made.
    auto made = begin_create(path, data, mode);
    auto listed = begin_children(dir);
    auto first = await(made, by);
    return {std::move(first), await(listed, by)};
}

ZkReply ZkSession::remove(const std::string& path, Clock::time_point by, int version) {
    return call(by, [&](void* ref) {
        return zoo_adelete(zh_, path.c_str(), version, &Call::answered, ref);
    });
}

ZkReply ZkSession::get(const std::string& path, Clock::time_point by) {
    return call(by, [&](void* ref) {
        return zoo_aget(
            zh_, path.c_str(), 0,
            [](int rc, const char* value, int len, const Stat* st, const void* d) {
                Call::finish(d, rc, [&](ZkReply& r) {
                    if (value && len > 0) r.data.assign(value, static_cast<std::size_t>(len));
                    if (st) r.stat = *st;
                });
            },
            ref);
    });
}

Status ZkSession::sync(const std::string& path, Clock::time_point by, const std::string& what) {
    auto r = call(by, [&](void* ref) { return zoo_async(zh_, path.c_str(), &Call::synced, ref); });
    return r.ok() || r.rc == ZNONODE ? Status{} : fail(r, what, false);
}

ZkReply ZkSession::set(const std::string& path, std::string_view data, int version,
                       Clock::time_point by) {
    return call(by, [&](void* ref) {
        return zoo_aset(zh_, path.c_str(), data.data(), static_cast<int>(data.size()), version,
                        &Call::stat, ref);
    });
}

ZkReply ZkSession::exists(const std::string& path, Clock::time_point by) {
    return call(by, [&](void* ref) { return zoo_aexists(zh_, path.c_str(), 0, &Call::stat, ref); });
}

ZkReply ZkSession::write_if_present(const std::vector<std::string>& present,
                                    const std::string& path, std::string_view data, bool create,
                                    Clock::time_point by) {
    auto call = std::make_shared<Call>();
    call->texts = present;
    call->texts.push_back(path);
    call->texts.emplace_back(data);  // no more growth: the ops point into these strings
    const auto& value = call->texts.back();
    const auto& target = call->texts[present.size()];
    call->ops.resize(present.size() + 1);
    call->results.resize(call->ops.size());
    for (std::size_t i = 0; i < present.size(); ++i)
        zoo_check_op_init(&call->ops[i], call->texts[i].c_str(), -1);
    if (create)
        zoo_create_op_init(&call->ops.back(), target.c_str(), value.data(),
                           static_cast<int>(value.size()), acl_, ZOO_PERSISTENT, nullptr, 0);
    else
        zoo_set_op_init(&call->ops.back(), target.c_str(), value.data(),
                        static_cast<int>(value.size()), -1, nullptr);
    return run_multi(call, by);
}

ZkReply ZkSession::run_multi(const std::shared_ptr<Call>& call, Clock::time_point by) {
    Pending p{call, ZOK};
    auto* ref = Call::ref(call);
    p.rc = zoo_amulti(
        zh_, static_cast<int>(call->ops.size()), call->ops.data(), call->results.data(),
        [](int rc, const void* d) {
            const auto& c = *static_cast<const std::shared_ptr<Call>*>(d);
            {
                // A failed multi's code is its failing operation's: each tells which.
                std::lock_guard lk(c->m);
                for (const auto& one : c->results) c->r.each.push_back(one.err);
            }
            Call::finish(d, rc, [](ZkReply&) {});
        },
        ref);
    if (p.rc != ZOK) delete static_cast<std::shared_ptr<Call>*>(ref);
    return await(p, by);
}

ZkReply ZkSession::remove_all(const std::vector<std::string>& paths, Clock::time_point by) {
    auto call = std::make_shared<Call>();
    call->texts = paths;  // no more growth: the ops point into these strings
    call->ops.resize(paths.size());
    call->results.resize(paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i)
        zoo_delete_op_init(&call->ops[i], call->texts[i].c_str(), -1);
    return run_multi(call, by);
}

ZkSession::Pending ZkSession::begin_children(const std::string& path) {
    return begin(
        [&](void* ref) { return zoo_aget_children2(zh_, path.c_str(), 0, &Call::listed, ref); });
}

ZkReply ZkSession::children(const std::string& path, Clock::time_point by) {
    return await(begin_children(path), by);
}

ZkSession::Watch* ZkSession::new_watch(std::function<void(int)> fired, std::uint64_t& id) {
    std::lock_guard lk(m_);
    id = next_watch_++;
    auto made = std::make_unique<Watch>(Watch{this, id, std::move(fired)});
    Watch* w = made.get();
    watches_.emplace(id, std::move(made));
    return w;
}

ZkReply ZkSession::watch(const std::string& path, Clock::time_point by, std::function<void()> fired,
                         std::uint64_t& id) {
    Watch* w = new_watch([f = std::move(fired)](int /*type*/) { f(); }, id);
    return call(by, [&](void* ref) {
        return zoo_awexists(zh_, path.c_str(), &ZkSession::on_watch, w, &Call::stat, ref);
    });
}

ZkReply ZkSession::watch_children(const std::string& path, Clock::time_point by,
                                  std::function<void()> fired, std::uint64_t& id) {
    Watch* w = new_watch([f = std::move(fired)](int /*type*/) { f(); }, id);
    return call(by, [&](void* ref) {
        return zoo_awget_children2(zh_, path.c_str(), &ZkSession::on_watch, w, &Call::listed, ref);
    });
}

void ZkSession::on_watch(zhandle_t* /*zh*/, int type, int state, const char* /*path*/, void* ctx) {
    auto* w = static_cast<Watch*>(ctx);
    ZkSession* s = w->session;
    if (type == ZOO_SESSION_EVENT && state != ZOO_EXPIRED_SESSION_STATE) return;
    std::function<void(int)> f;
    {
        std::lock_guard lk(s->m_);
        f = std::exchange(w->fired, {});
        // A node event is the C client's last use of this watch; a session's expiry is too.
        if (type != ZOO_SESSION_EVENT) s->watches_.erase(w->id);
    }
    if (f) f(type);
}

std::uint64_t ZkSession::watch_data(const std::string& path, std::function<void(ZkWatched)> told) {
    std::uint64_t id = 0;
    Watch* w = new_watch(
        [told = std::move(told)](int type) {
            told(type == ZOO_CHANGED_EVENT ? ZkWatched::changed
                 : type == 0               ? ZkWatched::unset
                                           : ZkWatched::gone);  // deleted, or the session ended
        },
        id);
    // The completion only tells a watch that was not set; a set one fires on the node's event.
    struct Setting {
        ZkSession* session;
        std::uint64_t id;
    };
    auto* setting = new Setting{this, id};
    int rc = zoo_awget(
        zh_, path.c_str(), &ZkSession::on_watch, w,
        [](int rc, const char* /*value*/, int /*len*/, const Stat* /*st*/, const void* d) {
            std::unique_ptr<Setting> s(static_cast<Setting*>(const_cast<void*>(d)));
            if (rc != ZOK) s->session->not_set(s->id, rc);
        },
        setting);
    if (rc != ZOK) {  // not sent: the completion will not run
        delete setting;
        not_set(id, rc);
    }
    return id;
}

void ZkSession::not_set(std::uint64_t id, int rc) {
    std::function<void(int)> f;
    {
        std::lock_guard lk(m_);
        if (auto it = watches_.find(id); it != watches_.end()) {
            f = std::exchange(it->second->fired, {});
            watches_.erase(it);  // a failed get leaves no watch with the C client
        }
    }
    // A node that is not there, or a session that ended, is gone; anything else left nothing
    // watched (0).
    if (f) f(rc == ZNONODE || rc == ZSESSIONEXPIRED ? ZOO_DELETED_EVENT : 0);
}

void ZkSession::unwatch(std::uint64_t id) noexcept {
    std::function<void(int)> dropped;  // destroyed outside the lock
    std::lock_guard lk(m_);
    if (auto it = watches_.find(id); it != watches_.end())
        dropped = std::exchange(it->second->fired, {});
}

Status ZkSession::fail(const ZkReply& r, const std::string& what, bool sent_write) const {
    if (r.rc == ZkReply::kNoAnswer)
        return Status::error(sent_write ? errc::unknown_outcome : errc::timeout,
                             fmt::format("ZooKeeper ({}) did not answer in time {}{}", servers_,
                                         what, sent_write ? ": it may have happened" : ""));
    switch (r.rc) {
        case ZCONNECTIONLOSS:
        case ZOPERATIONTIMEOUT:
            return Status::error(
                sent_write ? errc::unknown_outcome : errc::connection_lost,
                fmt::format("the connection to ZooKeeper ({}) was lost {}{}", servers_, what,
                            sent_write ? ": it may have happened" : ""));
        case ZSESSIONEXPIRED:
        case ZINVALIDSTATE:
        case ZSESSIONMOVED:
            return Status::error(
                errc::connection_lost,
                fmt::format("the ZooKeeper session ended {}: its locks are gone", what));
        case ZNOAUTH:
            return Status::error(
                errc::permission_denied,
                fmt::format("ZooKeeper ({}) refused {}: the node's ACL does not let this client "
                            "in (digest auth takes any user:password; the ACL decides, and "
                            "deadbolt gives the user:password that made a lock all rights on "
                            "it, anyone else read): connect as that user",
                            servers_, what));
        case ZAUTHFAILED:
            return Status::error(errc::auth_failed,
                                 fmt::format("ZooKeeper ({}) refused the credentials", servers_));
        default:
            return Status::error(errc::server_error, fmt::format("ZooKeeper ({}) failed {}: {}",
                                                                 servers_, what, zerror(r.rc)));
    }
}

}  // namespace deadbolt::detail
