// The watches on the client's own keys, each kept across the holdings of its key: a holding
// only marks itself on the watch (own) and off it (drop_own), and a deletion is a loss only
// when it comes after the holding's key was created (the release of an earlier holding of
// the same key is not). Idle watches wait in a list, longest idle first: beyond 256 idle, or
// after 30 s idle, the first are cancelled.
//
// A holder's lost() may refer to its holding, which drop_own lets go of: the stream's thread
// holds fire_m_ from before it looks for a lost() (under m_) until lost() returned, and
// drop_own, after it cleared the holder's lost() under m_, waits on fire_m_, so no lost()
// runs once drop_own returned. fire_m_ is taken before m_, as fire() does. (own() fires a
// displaced holder's lost() outside m_: two holdings of one key at once, which this client's
// claims never make.)
#include <vector>

#include "backends/etcd/watches.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::size_t kMostIdle = 256;
constexpr std::chrono::seconds kLongestIdle{30};

}  // namespace

std::int64_t Watches::own(const std::string& key, std::int64_t rev, std::function<void()> lost) {
    std::vector<std::int64_t> cancels;
    std::function<void()> displaced;
    std::int64_t holder = 0, created = 0;
    {
        std::lock_guard lk(m_);
        holder = next_id_++;
        auto it = kept_.find(key);
        if (it == kept_.end()) {
            created = next_id_++;
            it = kept_.emplace(key, Kept{}).first;
            it->second.watch = created;
            kept_key_.emplace(created, key);
        } else {
            // Idle, it began just after an earlier holding's create revision, so it sees
            // every deletion after this one's. Busy (the same key held twice at once, which
            // this client's claims never do), the newer holding takes it over and the earlier
            // holder hears a loss, and looks.
            if (it->second.holder == 0) idle_.erase(it->second.idle_at);
            displaced = std::move(it->second.lost);
        }
        it->second.holder = holder;
        it->second.rev = rev;
        it->second.lost = std::move(lost);
        retire_idle(cancels);
    }
    if (displaced) {
        std::lock_guard firing(fire_m_);
        displaced();
    }
    for (auto w : cancels) send_cancel(w);
    if (created) {
        auto req = create_request(key, {}, rev + 1, true);
        req.mutable_create_request()->set_watch_id(created);
        if (!stream_->write(req)) own_broken();  // broken: every holder looks again
    }
    return holder;
}

void Watches::drop_own(const std::string& key, std::int64_t id) noexcept {
    std::vector<std::int64_t> cancels;
    {
        std::lock_guard lk(m_);
        auto it = kept_.find(key);
        if (it != kept_.end() && it->second.holder == id) {
            it->second.holder = 0;
            it->second.lost = nullptr;
            it->second.idle_since = std::chrono::steady_clock::now();
            it->second.idle_at = idle_.insert(idle_.end(), key);
        }
        retire_idle(cancels);
    }
    { std::lock_guard wait_for_lost(fire_m_); }
    for (auto w : cancels) send_cancel(w);
}

void Watches::retire_idle(std::vector<std::int64_t>& cancels) {
    auto now = std::chrono::steady_clock::now();
    while (!idle_.empty()) {
        auto it = kept_.find(idle_.front());
        if (idle_.size() <= kMostIdle && now - it->second.idle_since < kLongestIdle) return;
        cancels.push_back(it->second.watch);
        forget(it);
    }
}

void Watches::forget(std::map<std::string, Kept>::iterator it) {
    if (it->second.holder == 0) idle_.erase(it->second.idle_at);
    kept_key_.erase(it->second.watch);
    kept_.erase(it);
}

bool Watches::own_message(const etcdserverpb::WatchResponse& r) {
    std::function<void()> lost;
    std::lock_guard firing(fire_m_);
    {
        std::lock_guard lk(m_);
        auto k = kept_key_.find(r.watch_id());
        if (k == kept_key_.end()) return false;
        auto it = kept_.find(k->second);
        if (it == kept_.end()) return true;
        if (r.canceled()) {  // compacted past its start, or refused: the holder looks again
            lost = std::move(it->second.lost);
            forget(it);
        } else {
            for (const auto& e : r.events())
                if (e.type() == mvccpb::Event::DELETE && e.kv().mod_revision() > it->second.rev)
                    lost = std::move(it->second.lost);
            if (lost) it->second.lost = nullptr;  // told once
        }
    }
    if (lost) lost();
    return true;
}

void Watches::own_broken() {
    // The server forgot every watch of the stream: each holder looks again, and the next
    // holding of a key creates its watch anew.
    std::vector<std::function<void()>> lost;
    std::lock_guard firing(fire_m_);
    {
        std::lock_guard lk(m_);
        for (auto& [key, kept] : kept_)
            if (kept.lost) lost.push_back(std::move(kept.lost));
        kept_.clear();
        kept_key_.clear();
        idle_.clear();
    }
    for (auto& f : lost) f();
}

}  // namespace deadbolt::detail
