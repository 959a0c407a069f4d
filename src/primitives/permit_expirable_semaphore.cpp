#include "deadbolt/permit_expirable_semaphore.hpp"
#include "backends/redis/store.hpp"

#include "backends/redis/commands.hpp"
#include "backends/redis/specs.hpp"
#include "core/client_impl.hpp"
#include "core/validity.hpp"
#include "deadbolt/error.hpp"
#include "primitives/take.hpp"

namespace deadbolt {
namespace {

// Runs one of the permit scripts for the permit id (held by anyone) and returns its integer.
long long run_op(detail::ClientImpl& c, const detail::RedisSpec& spec, const detail::Script& script,
                 std::string_view id, std::chrono::milliseconds px) {
    auto call =
        detail::lease_call(script, spec.op_keys, std::string(id), spec.channel, px, spec.op_args);
    detail::Reply r;
    redis(c).server->eval(call.view(), r, c.deadline()).throw_if_error();
    return r.integer;
}

}  // namespace

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
    auto spec = detail::semaphore_spec(client_->options.key_prefix, name_, options_, permits_);
    return run_op(*client_, spec, *spec.kind->release, permit_id, options_.ttl) >= 1;
}

bool PermitExpirableSemaphore::extend(std::string_view permit_id,
                                      std::chrono::milliseconds ttl) const {
    detail::validate_ttl(ttl, "extend ttl").throw_if_error();
    auto spec = detail::semaphore_spec(client_->options.key_prefix, name_, options_, permits_);
    return run_op(*client_, spec, *spec.kind->extend, permit_id, ttl) == 1;
}

int PermitExpirableSemaphore::available() const {
    return permits_ - detail::permits_in_use(*client_, name_);
}

}  // namespace deadbolt
