#include "deadbolt/permit_expirable_semaphore.hpp"

#include "core/client_impl.hpp"
#include "core/validity.hpp"
#include "deadbolt/error.hpp"
#include "primitives/take.hpp"

namespace deadbolt {

PermitExpirableSemaphore::PermitExpirableSemaphore(std::shared_ptr<detail::ClientImpl> client,
                                                   std::string name, int permits,
                                                   MutexOptions options)
    : client_(std::move(client)),
      name_(std::move(name)),
      permits_(permits),
      options_(std::move(options)) {}

Permit PermitExpirableSemaphore::acquire(const AcquireOptions& how) const {
    return detail::take(client_, detail::permits_spec(name_, options_, permits_), how, nullptr);
}

Permit PermitExpirableSemaphore::acquire(const AcquireOptions& how,
                                         std::error_code& ec) const noexcept {
    return detail::without_throwing(ec, [&] {
        return detail::take(client_, detail::permits_spec(name_, options_, permits_), how, &ec);
    });
}

Permit PermitExpirableSemaphore::try_acquire() const {
    AcquireOptions how;
    how.deadline = std::chrono::steady_clock::now();
    try {
        return acquire(how);
    } catch (const LockError& e) {
        if (e.code() == make_error_code(errc::not_acquired)) return {};
        throw;
    }
}

bool PermitExpirableSemaphore::release(std::string_view permit_id) const {
    bool released = false;
    client_->offered(&detail::Store::permits)
        .permit_release(name_, permit_id, released)
        .throw_if_error();
    return released;
}

bool PermitExpirableSemaphore::extend(std::string_view permit_id,
                                      std::chrono::milliseconds ttl) const {
    detail::validate_ttl(ttl, "extend ttl").throw_if_error();
    bool extended = false;
    client_->offered(&detail::Store::permits)
        .permit_extend(name_, permit_id, ttl, extended)
        .throw_if_error();
    return extended;
}

int PermitExpirableSemaphore::available() const {
    int in_use = 0;
    client_->offered(&detail::Store::permits)
        .permits_in_use(name_, permits_, in_use)
        .throw_if_error();
    return permits_ - in_use;
}

}  // namespace deadbolt
