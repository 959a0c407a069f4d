// The client's one etcd Watch stream, shared by every wake-up: a waiter watches the key just
// ahead of its own and hears of its deletion once; a holding watches its own key for a
// deletion that is not its release, on a watch kept for the next holding of that key
// (own_watches.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backends/etcd/channel.hpp"
#include "backends/etcd/stream.hpp"

namespace deadbolt::detail {

class Watches {
  public:
    explicit Watches(std::shared_ptr<EtcdChannel> ch);
    ~Watches();
    Watches(const Watches&) = delete;
    Watches& operator=(const Watches&) = delete;

    /// Calls fired() once (on the stream's reader thread; it must not block) when key is
    /// deleted at revision `from` or later, or when the watch cannot go on (the stream broke,
    /// the revision was compacted): either way, the caller looks again. Returns an id for
    /// cancel().
    std::int64_t on_delete(const std::string& key, std::int64_t from, std::function<void()> fired) {
        return on_delete(key, {}, from, std::move(fired));
    }
    /// As on_delete, for every key in [key, end) (end empty: key alone).
    std::int64_t on_delete(const std::string& key, const std::string& end, std::int64_t from,
                           std::function<void()> fired);
    /// As on_delete, for any change (put or delete) of a key in [key, end).
    std::int64_t on_change(const std::string& key, const std::string& end, std::int64_t from,
                           std::function<void()> fired);
    /// Forgets the watch; fired() is not called after this returns. Never throws.
    void cancel(std::int64_t id) noexcept;

    /// Calls lost() once (on the reader thread; it must not block) when key is deleted at a
    /// revision after rev, the key's create revision, or when the watch cannot go on. The
    /// watch outlives the holding: a client's holdings of a name share one key (its
    /// session's lease names it), so the next holding of key takes the watch over instead of
    /// creating and cancelling one of its own, which cost etcd and this client two requests
    /// and two answers per acquisition. Returns an id for drop_own().
    std::int64_t own(const std::string& key, std::int64_t rev, std::function<void()> lost);
    /// Ends the holding's interest in key; lost() is not called after this returns. The
    /// watch is kept idle for a later holding (a bounded number, for a bounded time). Never
    /// throws.
    void drop_own(const std::string& key, std::int64_t id) noexcept;

  private:
    using WatchStream = BidiStream<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>;

    std::int64_t add(etcdserverpb::WatchRequest& req, std::function<void()> fired);
    // The request that creates a watch on [key, end) from revision `from` (deletes only, or
    // every change); its watch id is the caller's to set.
    static etcdserverpb::WatchRequest create_request(const std::string& key, const std::string& end,
                                                     std::int64_t from, bool deletes_only);
    std::int64_t create(const std::string& key, const std::string& end, std::int64_t from,
                        bool deletes_only, std::function<void()> fired);
    void message(const etcdserverpb::WatchResponse& r);
    void broken();
    void fire(std::int64_t id);

    // A watch on one of the client's own keys, kept across its holdings.
    struct Kept {
        std::int64_t watch = 0;   // the stream's watch id
        std::int64_t holder = 0;  // own()'s id of the holding that has it; 0 = idle
        std::int64_t rev = 0;     // that holding's create revision
        std::function<void()> lost;
        std::chrono::steady_clock::time_point idle_since;
        std::list<std::string>::iterator idle_at;  // its key's place in idle_ while idle
    };
    bool own_message(const etcdserverpb::WatchResponse& r);  // false: not a kept watch
    void own_broken();
    void retire_idle(std::vector<std::int64_t>& cancels);   // with m_ held
    void forget(std::map<std::string, Kept>::iterator it);  // with m_ held
    void send_cancel(std::int64_t watch) noexcept;

    std::mutex m_;
    std::int64_t next_id_ = 1;
    std::map<std::int64_t, std::function<void()>> watching_;
    std::map<std::string, Kept> kept_;
    std::map<std::int64_t, std::string> kept_key_;  // watch id -> key
    std::list<std::string> idle_;                   // the idle ones' keys, longest idle first
    std::mutex fire_m_;  // held while a fired() runs: cancel() waits for it
    std::unique_ptr<WatchStream> stream_;
};

}  // namespace deadbolt::detail
