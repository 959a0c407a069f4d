#include "deadbolt/client.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/client_impl.hpp"
#include "core/engines.hpp"
#include "core/validity.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/fence.hpp"
#include "primitives/take.hpp"

namespace deadbolt {
namespace {

// Every URL form the engines linked into this program take, for a URL none of them takes.
std::string url_forms_text() {
    auto forms = Client::url_forms();
    if (forms.empty())
        return "nothing: no engine is linked into this program (link deadbolt::redis or "
               "another engine's library)";
    return fmt::format("{}", fmt::join(forms, ", "));
}

}  // namespace

Client Client::connect(std::string_view url, const ClientOptions& options) {
    detail::validate_options(options).throw_if_error();
    auto end = url.find("://");
    std::string_view scheme = end == std::string_view::npos ? "" : url.substr(0, end);
    if (auto engine = detail::engine_for_scheme(scheme)) {
        if (options.engine != nullptr && options.engine->engine() != engine->name)
            throw UsageError(make_error_code(errc::invalid_argument),
                             fmt::format("ClientOptions::engine holds options for {}, but '{}' is "
                                         "a URL of {}: drop them, or connect to {}",
                                         options.engine->engine(), scheme, engine->name,
                                         options.engine->engine()));
        return engine->connect(url, options);
    }
    throw UsageError(make_error_code(errc::invalid_url),
                     scheme.empty()
                         ? fmt::format("URL '{}' has no scheme: expected {}", url, url_forms_text())
                         : fmt::format("unknown URL scheme '{}' in '{}': expected {}", scheme, url,
                                       url_forms_text()));
}

std::vector<std::string> Client::url_forms() {
    std::vector<std::string> forms;
    for (const auto& engine : detail::linked_engines()) forms.emplace_back(engine.url_form);
    return forms;
}

Mutex Client::mutex(std::string_view name, MutexOptions options) const {
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return Mutex(impl_, std::string(name), std::move(options));
}

namespace {

void check_permits(int permits) {
    if (permits < 1)
        throw UsageError(make_error_code(errc::invalid_argument),
                         fmt::format("a semaphore needs at least 1 permit, not {}", permits));
}

}  // namespace

FairMutex Client::fair_mutex(std::string_view name, MutexOptions options) const {
    impl_->store->keeps(detail::Shape::fair).throw_if_error();
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return FairMutex(Mutex(impl_, std::string(name), std::move(options), detail::LockFlavor::fair));
}

ReentrantMutex Client::reentrant_mutex(std::string_view name, MutexOptions options,
                                       std::string_view owner) const {
    impl_->store->keeps(detail::Shape::reentrant).throw_if_error();
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    if (owner.size() > kMaxNameBytes)
        throw UsageError(
            make_error_code(errc::invalid_argument),
            fmt::format("owner id is {} bytes, over the limit of {}", owner.size(), kMaxNameBytes));
    return ReentrantMutex(impl_, std::string(name), std::move(options), std::string(owner));
}

RWLock Client::rwlock(std::string_view name, MutexOptions options) const {
    impl_->store->keeps(detail::Shape::write).throw_if_error();
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return RWLock(impl_, std::string(name), std::move(options));
}

Semaphore Client::semaphore(std::string_view name, int permits, MutexOptions options) const {
    // An engine that keeps permits hands them out (Redlock and MariaDB do neither).
    (void)detail::offered(*impl_->store, impl_->store->permits(), "Semaphore");
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    check_permits(permits);
    return Semaphore(impl_, std::string(name), permits, std::move(options));
}

PermitExpirableSemaphore Client::permit_semaphore(std::string_view name, int permits,
                                                  MutexOptions options) const {
    (void)impl_->offered(&detail::Store::permits);
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    check_permits(permits);
    return PermitExpirableSemaphore(impl_, std::string(name), permits, std::move(options));
}

MultiLock Client::multi_lock(std::vector<std::string> names, MutexOptions options) const {
    detail::validate_names(names).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return MultiLock(Mutex(impl_, std::move(names), std::move(options)));
}

Lease Client::acquire_all(const std::vector<std::string>& names, const MutexOptions& options,
                          const AcquireOptions& how) const {
    return detail::take(impl_, detail::multi_spec_of(names, options), how, nullptr);
}

RateLimiter Client::rate_limiter(std::string_view name, RateLimit limit) const {
    (void)impl_->offered(&detail::Store::rate_limits);
    detail::validate_name(name).throw_if_error();
    detail::validate_rate_limit(limit).throw_if_error();
    return RateLimiter(impl_, std::string(name), limit);
}

LeaderElection Client::election(std::string_view name, MutexOptions options) const {
    impl_->store->keeps(detail::Shape::leader).throw_if_error();
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return LeaderElection(impl_, std::string(name), std::move(options));
}

Lease Client::campaign(std::string_view name, std::string_view value, const MutexOptions& options,
                       const AcquireOptions& how) const {
    detail::validate_leader_value(value).throw_if_error();
    return detail::take(impl_, detail::leader_spec(name, options, value), how, nullptr);
}

CountDownLatch Client::latch(std::string_view name) const {
    (void)impl_->offered(&detail::Store::latches);
    detail::validate_name(name).throw_if_error();
    return CountDownLatch(impl_, std::string(name));
}

Lease Client::acquire(std::string_view name, const MutexOptions& options,
                      const AcquireOptions& how) const {
    return detail::take(impl_, detail::spec_of(detail::Shape::exclusive, name, options), how,
                        nullptr);
}

Lease Client::acquire(std::string_view name, const MutexOptions& options, const AcquireOptions& how,
                      std::error_code& ec) const noexcept {
    return detail::without_throwing(ec, [&] {
        return detail::take(impl_, detail::spec_of(detail::Shape::exclusive, name, options), how,
                            &ec);
    });
}

Lease Client::acquire(std::string_view name, LockMode mode, const MutexOptions& options,
                      const AcquireOptions& how) const {
    auto take = [&](detail::Shape shape) {
        return detail::take(impl_, detail::spec_of(shape, name, options), how, nullptr);
    };
    switch (mode) {
        case LockMode::fair:
            return take(detail::Shape::fair);
        case LockMode::shared:
            return take(detail::Shape::read);
        case LockMode::write:
            return take(detail::Shape::write);
        case LockMode::exclusive:
            break;
    }
    return acquire(name, options, how);
}

namespace {

void check_fenced_key(std::string_view key) {
    if (key.empty())
        throw UsageError(make_error_code(errc::invalid_argument), "fenced write: empty key");
}

}  // namespace

FencedValue Client::fenced_get(std::string_view key) const {
    check_fenced_key(key);
    FencedValue out;
    impl_->offered(&detail::Store::fenced_data).fenced_get(key, out).throw_if_error();
    return out;
}

FencedResult Client::fenced_cas(std::string_view key, std::string_view value, std::uint64_t fence,
                                std::uint64_t version) const {
    return fenced_write(key, value, fence, std::to_string(version));
}

std::string Client::force_unlock(std::string_view name) const {
    detail::validate_name(name).throw_if_error();
    std::string kind;
    impl_->offered(&detail::Store::admin).force_unlock(std::string(name), kind).throw_if_error();
    return kind;
}

FencedResult Client::fenced_set(std::string_view key, std::string_view value,
                                std::uint64_t fence) const {
    return fenced_write(key, value, fence, "");
}

FencedResult Client::fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                                  std::string_view version) const {
    check_fenced_key(key);
    if (fence == 0)
        throw UsageError(make_error_code(errc::invalid_argument),
                         "fenced_set: fence 0 is not a token; pass lease.fence()");
    if (fence > kMaxFence)
        throw UsageError(make_error_code(errc::invalid_argument),
                         fmt::format("fenced_set: fence {} is out of range: deadbolt's fences are "
                                     "1..{}; pass lease.fence()",
                                     fence, kMaxFence));
    FencedResult out;
    impl_->offered(&detail::Store::fenced_data)
        .fenced_write(key, value, fence, version, out)
        .throw_if_error();
    out.stale_fence = !out.accepted && out.highest > fence;
    return out;
}

const std::vector<std::string>& Client::warnings() const noexcept {
    return impl_->warnings;
}

void Client::ping() const {
    impl_->store->ping().throw_if_error();
}

std::string Client::lock_key(std::string_view name) const {
    return impl_->options.key_prefix + std::string(name);
}

}  // namespace deadbolt
