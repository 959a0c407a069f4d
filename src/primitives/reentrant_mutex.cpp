#include "deadbolt/reentrant_mutex.hpp"

#include <functional>
#include <thread>

#include "core/client_impl.hpp"
#include "core/lock_spec.hpp"
#include "deadbolt/error.hpp"
#include "primitives/take.hpp"

namespace deadbolt {

ReentrantMutex::ReentrantMutex(std::shared_ptr<detail::ClientImpl> client, std::string name,
                               MutexOptions options, std::string owner)
    : client_(std::move(client)),
      name_(std::move(name)),
      options_(std::move(options)),
      owner_(std::move(owner)) {}

ReentrantMutex::~ReentrantMutex() {
    std::map<std::string, std::vector<Lease>> held;
    {
        std::lock_guard lk(m_);
        held.swap(held_);
    }
    // Latest holding first, as the owner would have unlocked them, each counted off before
    // its release (which then knows whether the owner holds on: LeaseState).
    for (auto& [owner, leases] : held) {
        while (!leases.empty()) {
            if (owner_.empty()) client_->count_reentrant_hold_off(name_, owner);
            leases.pop_back();
        }
    }
}

ReentrantMutex::ReentrantMutex(ReentrantMutex&& other) noexcept
    : client_(std::move(other.client_)),
      name_(std::move(other.name_)),
      options_(std::move(other.options_)),
      owner_(std::move(other.owner_)) {
    std::lock_guard lk(other.m_);
    held_.swap(other.held_);
}

std::string ReentrantMutex::owner() const {
    if (!owner_.empty()) return owner_;
    return client_->id + ":" +
           std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
}

bool ReentrantMutex::lock_until(clock::time_point deadline, std::error_code* ec) {
    std::string who = owner();
    detail::LockSpec spec = detail::spec_of(detail::Shape::reentrant, name_, options_);
    spec.owner = who;
    spec.owner_only_here = owner_.empty();
    if (owner_.empty()) {
        // Only this client uses its default owner: if none of its handles holds the lock, a
        // holding of ours on the server is a leftover (a grant whose reply was lost, data
        // rolled back by a restart or failover) and gets a new holding and a new fence.
        spec.reentry = client_->reentrant_holds(name_, who) > 0;
        spec.leftover_is_new = !spec.reentry;
    } else {
        std::lock_guard lk(m_);
        spec.reentry = held_.contains(who);
    }
    Lease l;
    if (!detail::take(client_, spec, deadline, l, ec)) return false;
    // A holding that cannot be counted or kept (no memory) is released by l's destructor,
    // after the count is set back: its release then knows whether the owner holds on.
    if (owner_.empty()) client_->count_reentrant_hold_on(name_, who);
    try {
        std::lock_guard lk(m_);
        auto it = held_.try_emplace(who).first;
        try {
            it->second.push_back(std::move(l));
        } catch (...) {  // unlock() must never find an owner with no holding
            if (it->second.empty()) held_.erase(it);
            throw;
        }
    } catch (...) {
        if (owner_.empty()) client_->count_reentrant_hold_off(name_, who);
        throw;
    }
    return true;
}

void ReentrantMutex::lock() {
    lock_until(clock::time_point::max(), nullptr);
}

void ReentrantMutex::lock(std::error_code& ec) noexcept {
    detail::without_throwing(ec, [&] { lock_until(clock::time_point::max(), &ec); });
}

bool ReentrantMutex::try_lock() {
    return lock_until(clock::now(), nullptr);
}

bool ReentrantMutex::try_lock(std::error_code& ec) noexcept {
    return detail::without_throwing(ec, [&] { return lock_until(clock::now(), &ec); });
}

void ReentrantMutex::unlock() noexcept {
    std::optional<Lease> last;
    try {
        std::string who = owner();
        std::lock_guard lk(m_);
        auto it = held_.find(who);
        if (it == held_.end()) return;
        last.emplace(std::move(it->second.back()));
        it->second.pop_back();
        if (it->second.empty()) held_.erase(it);
        if (owner_.empty()) client_->count_reentrant_hold_off(name_, who);
    } catch (...) {
        return;  // owner() could not allocate: nothing was taken out
    }
    // last's destructor releases one holding outside m_; failures go to on_lost.
}

Lease& ReentrantMutex::lease() {
    std::string who = owner();
    std::lock_guard lk(m_);
    auto it = held_.find(who);
    if (it == held_.end())
        throw LockError(make_error_code(errc::not_owner),
                        "ReentrantMutex '" + name_ + "' is not held by owner " + who);
    return it->second.front();
}

std::size_t ReentrantMutex::hold_count() const {
    std::string who = owner();
    std::lock_guard lk(m_);
    auto it = held_.find(who);
    return it == held_.end() ? 0 : it->second.size();
}

}  // namespace deadbolt
