// ZkSession: one ZooKeeper session through the C client (libzookeeper-mt), and every call
// this backend makes on it, each with a deadline. The C client runs two threads of its own
// (I/O and completions) that never reach the public API: completions and watches are handed
// to this object, which wakes the caller or the watch's owner. A session that expired is
// dead for good; the store opens a new one (its ephemeral nodes went with the old one).
#pragma once

#include <zookeeper/zookeeper.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/zookeeper/url.hpp"
#include "core/status.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::detail {

using Clock = std::chrono::steady_clock;

/// The answer of one call: ZooKeeper's return code (ZOK, ZNONODE, ...), or kNoAnswer when
/// none came by the deadline.
struct ZkReply {
    static constexpr int kNoAnswer = 1;  // no ZooKeeper code is positive
    int rc = kNoAnswer;
    std::string path;                   // create: the node made (sequence included)
    Stat stat{};                        // create, exists, children: the node's
    std::vector<std::string> children;  // children
    std::string data;                   // get: the node's data
    std::vector<int> each;              // multi: each operation's code, in order
    bool ok() const { return rc == ZOK; }
};

/// What became of a watch left on a node's data without waiting (ZkSession::watch_data).
enum class ZkWatched : unsigned char {
    gone,     ///< the node was deleted, was missing when the watch was set, or the session ended
    changed,  ///< its data changed: the node is there, the watch is spent
    unset,    ///< the watch could not be set (no connection): nothing is watched
};

class ZkSession {
  public:
    /// A session with the ensemble url names, asking for a timeout of `asked`, connected
    /// within the connect timeout, with digest auth added when the URL names a user, and its
    /// chroot found; the nodes it creates get the URL's ACL. Fails with connect_failed when
    /// no server was reached (at once when every one refused, naming each and why) or none
    /// made a session (naming those that took a TCP connection but did not answer as
    /// ZooKeeper), invalid_argument when the chroot is missing.
    static Status open(const ZkUrl& url, std::chrono::milliseconds asked,
                       std::shared_ptr<ZkSession>& out);
    /// Closes the session: its ephemeral nodes go at once.
    ~ZkSession();
    ZkSession(const ZkSession&) = delete;
    ZkSession& operator=(const ZkSession&) = delete;

    /// The session's id (a node's ephemeralOwner when it made the node).
    std::int64_t id() const { return id_; }
    /// The session timeout the ensemble granted.
    std::chrono::milliseconds timeout() const { return timeout_; }
    /// Whether the ensemble ended this session (every node of it is gone).
    bool expired() const;
    /// The servers, for messages.
    const std::string& describe() const { return servers_; }
    /// Calls f (on the C client's thread, which f must not block) when the session expires
    /// or the connection is lost or regained; empty: nobody. Once this returns, the old f is
    /// not running and will not run.
    void set_on_state(std::function<void()> f);

    ZkReply create(const std::string& path, std::string_view data, int mode, Clock::time_point by);
    /// create(), and children(dir) sent right behind it (one round trip for both): the list
    /// includes the node made.
    std::pair<ZkReply, ZkReply> create_and_list(const std::string& path, std::string_view data,
                                                int mode, const std::string& dir,
                                                Clock::time_point by);
    /// Deletes path if its version is still `version` (-1: any).
    ZkReply remove(const std::string& path, Clock::time_point by, int version = -1);
    ZkReply get(const std::string& path, Clock::time_point by);
    /// The server this session talks to catches up with the leader (ZooKeeper's sync): a
    /// read after it sees every write committed before it, ours whose reply was lost too. Ok
    /// also when path does not exist; else fail()'s Status, naming what.
    Status sync(const std::string& path, Clock::time_point by, const std::string& what);
    /// Sets path's data if its version is still `version` (-1: any).
    ZkReply set(const std::string& path, std::string_view data, int version, Clock::time_point by);
    ZkReply exists(const std::string& path, Clock::time_point by);
    /// One multi: writes data to path (creates it, persistent, when create) only while every
    /// node of `present` exists; each holds every operation's code.
    ZkReply write_if_present(const std::vector<std::string>& present, const std::string& path,
                             std::string_view data, bool create, Clock::time_point by);
    /// One multi that deletes every one of paths, or none: fails with the first failing
    /// delete's code (ZNONODE: one was gone already), each holding every operation's code.
    ZkReply remove_all(const std::vector<std::string>& paths, Clock::time_point by);
    ZkReply children(const std::string& path, Clock::time_point by);
    /// exists() that also leaves a watch on path: fired() is called once (on the C client's
    /// thread) when the node is created, changed or deleted, or the session expires, unless
    /// unwatch(id) came first. id names the watch.
    ZkReply watch(const std::string& path, Clock::time_point by, std::function<void()> fired,
                  std::uint64_t& id);
    /// children() that also leaves a watch on path's children, as watch() does on a node.
    ZkReply watch_children(const std::string& path, Clock::time_point by,
                           std::function<void()> fired, std::uint64_t& id);
    /// Leaves a watch on path's data without waiting for the answer (the request goes behind
    /// the ones sent before): told() is called once, on the C client's thread, with what
    /// became of it, unless unwatch(id) came first. Returns id.
    std::uint64_t watch_data(const std::string& path, std::function<void(ZkWatched)> told);
    /// Forgets watch id: its fired() will not be called. Never throws.
    void unwatch(std::uint64_t id) noexcept;

    /// The Status for a reply that is not ok, naming what was being done ("creating
    /// '/x'"); sent: the call may have taken effect (a write) when no answer came.
    Status fail(const ZkReply& r, const std::string& what, bool sent_write) const;

  private:
    struct Call;
    ZkSession() = default;
    static void on_event(zhandle_t* zh, int type, int state, const char* path, void* ctx);
    struct Watch;
    // fired(type): ZooKeeper's event type; ZOO_SESSION_EVENT for the session's expiry.
    Watch* new_watch(std::function<void(int)> fired, std::uint64_t& id);
    static void on_watch(zhandle_t* zh, int type, int state, const char* path, void* ctx);
    // A watch_data() whose watch was not set (rc says why): told at once, and forgotten.
    void not_set(std::uint64_t id, int rc);
    // Waits until the session is made (or failed for good) or until by: whether it was made.
    bool made_by(Clock::time_point by);
    void state_changed(int state);
    // A call on its way (rc: ZOK, or why it was not sent).
    struct Pending {
        std::shared_ptr<Call> call;
        int rc;
    };
    // Starts one call: start(ref) hands ref to the C client's completion.
    template <class Start>
    static Pending begin(Start start);
    // Its answer by `by`.
    static ZkReply await(const Pending& p, Clock::time_point by);
    template <class Start>
    static ZkReply call(Clock::time_point by, Start start);
    Pending begin_create(const std::string& path, std::string_view data, int mode);
    Pending begin_children(const std::string& path);
    // Sends call's ops (and their results) as one multi and waits for its answer.
    ZkReply run_multi(const std::shared_ptr<Call>& call, Clock::time_point by);

    zhandle_t* zh_ = nullptr;
    std::int64_t id_ = 0;
    std::chrono::milliseconds timeout_{0};
    std::string servers_;
    std::vector<std::uint16_t> ports_;  // the servers' client ports
    // What the nodes it creates get: anyone all rights, or the URL's user all rights and
    // anyone else read.
    const ACL_vector* acl_ = &ZOO_OPEN_ACL_UNSAFE;
    ACL creator_read_[2]{};
    ACL_vector creator_read_vector_{};
    mutable std::mutex m_;
    std::condition_variable cv_;
    int state_ = 0;
    std::uint64_t next_watch_ = 1;
    struct Watch {
        ZkSession* session;
        std::uint64_t id;
        std::function<void(int)> fired;  // empty once fired or unwatched
    };
    // The C client holds a pointer to each until it fires its node event; the rest go with
    // the session.
    std::map<std::uint64_t, std::unique_ptr<Watch>> watches_;
    std::mutex cb_m_;  // held while on_state_ runs
    std::function<void()> on_state_;
};

/// A watch this client left on a session, until it is dropped.
struct ZkWatchRef {
    std::shared_ptr<ZkSession> session;
    std::uint64_t id = 0;  // 0: none
    bool set() const { return id != 0; }
    /// Forgets the watch: its callback will not run. Never throws.
    void drop() noexcept {
        if (id != 0 && session) session->unwatch(id);
        id = 0;
        session.reset();
    }
};

}  // namespace deadbolt::detail
