#include "deadbolt/rwlock.hpp"

#include "core/client_impl.hpp"
#include "core/lock_spec.hpp"
#include "deadbolt/error.hpp"
#include "primitives/take.hpp"

namespace deadbolt {

RWLock::RWLock(std::shared_ptr<detail::ClientImpl> client, std::string name, MutexOptions options)
    : MutexFront(Mutex(std::move(client), std::move(name), std::move(options),
                       detail::LockFlavor::write)) {}

RWLock::~RWLock() {
    std::vector<std::pair<std::thread::id, Lease>> readers;
    {
        std::lock_guard lk(m_);
        readers.swap(readers_);
    }
    // The leases' destructors release; the writer's Mutex unlocks as it goes. Neither throws.
}

RWLock::RWLock(RWLock&& other) noexcept : MutexFront(std::move(other.lock_)) {
    std::lock_guard lk(other.m_);
    readers_.swap(other.readers_);
}

bool RWLock::lock_shared_until(clock::time_point deadline, std::error_code* ec) {
    Lease l;
    // Readers take the same name, client and options as the writer's Mutex.
    if (!detail::take(lock_.client_, detail::spec_of(detail::Shape::read, name(), lock_.options_),
                      deadline, l, ec))
        return false;
    std::lock_guard lk(m_);
    readers_.emplace_back(std::this_thread::get_id(), std::move(l));
    return true;
}

void RWLock::lock_shared() {
    lock_shared_until(clock::time_point::max(), nullptr);
}

void RWLock::lock_shared(std::error_code& ec) noexcept {
    detail::without_throwing(ec, [&] { lock_shared_until(clock::time_point::max(), &ec); });
}

bool RWLock::try_lock_shared() {
    return lock_shared_until(clock::now(), nullptr);
}

void RWLock::unlock_shared() noexcept {
    std::optional<Lease> l;
    {
        std::lock_guard lk(m_);
        auto me = std::this_thread::get_id();
        for (auto it = readers_.rbegin(); it != readers_.rend(); ++it) {
            if (it->first != me) continue;
            l.emplace(std::move(it->second));
            readers_.erase(std::next(it).base());
            break;
        }
    }
    // l's destructor releases outside m_; a failure goes to on_lost.
}

Lease& RWLock::shared_lease() {
    std::lock_guard lk(m_);
    auto me = std::this_thread::get_id();
    for (auto it = readers_.rbegin(); it != readers_.rend(); ++it)
        if (it->first == me) return it->second;
    throw LockError(make_error_code(errc::not_owner),
                    "RWLock '" + name() + "' is not read-locked by this thread");
}

}  // namespace deadbolt
