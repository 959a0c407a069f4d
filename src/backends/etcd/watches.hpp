// The client's one etcd Watch stream, shared by every wake-up: a waiter watches the key just
// ahead of its own, a holding watches its own key; each hears of that key's deletion once.
#pragma once

#include <cstdint>
#include <functional>
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

  private:
    using WatchStream = BidiStream<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>;

    std::int64_t add(etcdserverpb::WatchRequest& req, std::function<void()> fired);
    std::int64_t create(const std::string& key, const std::string& end, std::int64_t from,
                        bool deletes_only, std::function<void()> fired);
    void message(const etcdserverpb::WatchResponse& r);
    void broken();
    void fire(std::int64_t id);

    std::mutex m_;
    std::int64_t next_id_ = 1;
    std::map<std::int64_t, std::function<void()>> watching_;
    std::mutex fire_m_;  // held while a fired() runs: cancel() waits for it
    std::unique_ptr<WatchStream> stream_;
};

}  // namespace deadbolt::detail
