#include "deadbolt/mutex.hpp"

#include "core/async_acquire.hpp"
#include "core/client_impl.hpp"
#include "core/lease_state.hpp"
#include "core/lock_spec.hpp"
#include "core/spare_claim.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/fair_mutex.hpp"
#include "deadbolt/multi_lock.hpp"
#include "primitives/take.hpp"

namespace deadbolt {

static_assert(std::is_move_constructible_v<Mutex>);
static_assert(std::is_move_constructible_v<FairMutex>);
static_assert(std::is_move_constructible_v<MultiLock>);

namespace {

detail::LockSpec spec_of(detail::LockFlavor flavor, std::string_view name,
                         const std::vector<std::string>& names, const MutexOptions& o) {
    switch (flavor) {
        case detail::LockFlavor::multi:
            return detail::multi_spec_of(names, o);
        case detail::LockFlavor::fair:
            return detail::spec_of(detail::Shape::fair, name, o);
        case detail::LockFlavor::write:
            return detail::spec_of(detail::Shape::write, name, o);
        case detail::LockFlavor::plain:
            break;
    }
    return detail::spec_of(detail::Shape::exclusive, name, o);
}

// A moved-from lock has nothing to lock with (no client, no spare claim and spec): refused,
// as the asynchronous start refuses it.
detail::Status moved_from() {
    return detail::Status::error(errc::invalid_argument,
                                 "this Mutex was moved from: lock the one it was moved to");
}

}  // namespace

Mutex::Mutex(std::shared_ptr<detail::ClientImpl> client, std::string name, MutexOptions options,
             detail::LockFlavor flavor)
    : client_(std::move(client)),
      name_(std::move(name)),
      options_(std::move(options)),
      flavor_(flavor),
      spare_(std::make_unique<detail::SpareClaim>(spec_of(flavor_, name_, names_, options_))) {}

Mutex::Mutex(std::shared_ptr<detail::ClientImpl> client, std::vector<std::string> names,
             MutexOptions options)
    : client_(std::move(client)),
      name_(detail::multi_display_name(names)),
      options_(std::move(options)),
      flavor_(detail::LockFlavor::multi),
      names_(std::move(names)),
      spare_(std::make_unique<detail::SpareClaim>(spec_of(flavor_, name_, names_, options_))) {}

Mutex::Mutex(Mutex&& other) noexcept
    : client_(std::move(other.client_)),
      name_(std::move(other.name_)),
      options_(std::move(other.options_)),
      lease_(std::move(other.lease_)),
      flavor_(other.flavor_),
      names_(std::move(other.names_)),
      spare_(std::move(other.spare_)) {
    other.lease_.reset();
}

Mutex::~Mutex() {
    unlock();
}

void Mutex::lock() {
    lock_until(clock::time_point::max());
}

void Mutex::lock(std::error_code& ec) noexcept {
    lock_until(clock::time_point::max(), ec);
}

bool Mutex::try_lock() {
    return lock_until(clock::now());
}

bool Mutex::try_lock(std::error_code& ec) noexcept {
    return lock_until(clock::now(), ec);
}

bool Mutex::lock_until(clock::time_point deadline) {
    if (!spare_) moved_from().throw_if_error();
    Lease l;
    if (!detail::take(client_, spare_->spec(), deadline, l, nullptr, spare_.get())) return false;
    std::lock_guard lk(m_);
    lease_.emplace(std::move(l));
    return true;
}

bool Mutex::lock_until(clock::time_point deadline, std::error_code& ec) noexcept {
    return detail::without_throwing(ec, [&] {
        if (!spare_) {
            ec = moved_from().ec;
            return false;
        }
        Lease l;
        if (!detail::take(client_, spare_->spec(), deadline, l, &ec, spare_.get())) return false;
        std::lock_guard lk(m_);
        lease_.emplace(std::move(l));
        return true;
    });
}

void Mutex::unlock() noexcept {
    std::optional<Lease> l;
    {
        std::lock_guard lk(m_);
        l.swap(lease_);
    }
    // Lease's destructor releases and reports a failure through on_lost; never throws.
}

Lease& Mutex::lease() {
    std::lock_guard lk(m_);
    if (!lease_)
        throw LockError(make_error_code(errc::not_owner), "Mutex '" + name_ + "' is not locked");
    return *lease_;
}

bool Mutex::owns_lock() const noexcept {
    std::lock_guard lk(m_);
    return lease_.has_value();
}

namespace detail {

void start_lock(Mutex& m, const AcquireOptions& how, std::stop_token also,
                AsyncDone done) noexcept {
    try {
        bool held = false;
        {
            std::lock_guard lk(m.m_);
            held = m.lease_.has_value();
        }
        if (held || !m.spare_) return done(make_error_code(errc::invalid_argument));  // or moved
        LockSpec spec = m.spare_->spec();
        // Nothing throws past here: async_acquire reports through its callback.
        async_acquire(m.client_, std::move(spec), how, std::move(also),
                      [&m, done = std::move(done)](const Status& st, Lease l) {
                          if (st.ok()) {
                              std::lock_guard lk(m.m_);
                              m.lease_.emplace(std::move(l));
                          }
                          done(st.ec);
                      });
    } catch (const std::exception&) {
        done(std::make_error_code(std::errc::not_enough_memory));
    }
}

}  // namespace detail

}  // namespace deadbolt
