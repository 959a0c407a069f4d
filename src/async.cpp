// The asynchronous API's entry points: what the templates of deadbolt/async.hpp call.
#include "deadbolt/async.hpp"

#include "client_access.hpp"
#include "core/async_acquire.hpp"
#include "core/client_impl.hpp"
#include "core/lease_state.hpp"
#include "core/lock_spec.hpp"
#include "core/validity.hpp"

namespace deadbolt::detail {

namespace {

Shape shape_of(LockMode mode) {
    switch (mode) {
        case LockMode::fair:
            return Shape::fair;
        case LockMode::shared:
            return Shape::read;
        case LockMode::write:
            return Shape::write;
        case LockMode::exclusive:
            break;
    }
    return Shape::exclusive;
}

LockSpec spec_of(const AsyncTarget& t, const MutexOptions& o) {
    switch (t.what) {
        case AsyncTarget::What::all:
            return multi_spec_of(t.names, o);
        case AsyncTarget::What::campaign:
            return leader_spec(t.name, o, t.value);
        case AsyncTarget::What::one:
            break;
    }
    return spec_of(shape_of(t.mode), t.name, o);
}

// Both starts: checks the target, then acquires; finish gets (Status, Lease) once.
template <class Finish>
void begin_acquire(const Client& client, const AsyncTarget& target, const MutexOptions& options,
                   const AcquireOptions& how, std::stop_token also, Finish finish) noexcept {
    try {
        if (target.what == AsyncTarget::What::campaign)
            if (Status st = validate_leader_value(target.value); !st.ok()) return finish(st, {});
        const auto& impl = ClientAccess::impl(client);
        if (!impl)
            return finish(Status::error(errc::invalid_argument, "an empty (moved-from) Client"),
                          {});
        async_acquire(impl, spec_of(target, options), how, std::move(also), std::move(finish));
    } catch (const std::exception& ex) {
        finish(Status{std::make_error_code(std::errc::not_enough_memory), ex.what()}, {});
    }
}

}  // namespace

AsyncTarget target_named(std::string_view mode, std::string name, std::vector<std::string> names,
                         std::string value) {
    AsyncTarget t;
    if (mode == "all") {
        t.what = AsyncTarget::What::all;
        t.names = std::move(names);
        return t;
    }
    t.name = std::move(name);
    if (mode == "campaign") {
        t.what = AsyncTarget::What::campaign;
        t.value = std::move(value);
    } else if (mode == "fair") {
        t.mode = LockMode::fair;
    } else if (mode == "shared") {
        t.mode = LockMode::shared;
    } else if (mode == "write") {
        t.mode = LockMode::write;
    } else if (mode != "exclusive") {
        throw_error(make_error_code(errc::invalid_argument),
                    "unknown lock mode '" + std::string(mode) + "'");
    }
    return t;
}

void start_acquire(const Client& client, const AsyncTarget& target, const MutexOptions& options,
                   const AcquireOptions& how, std::stop_token also, AsyncLeaseDone done) noexcept {
    begin_acquire(
        client, target, options, how, std::move(also),
        [done = std::move(done)](const Status& st, Lease l) { done(st.ec, std::move(l)); });
}

void start_acquire_reporting(const Client& client, const AsyncTarget& target,
                             const MutexOptions& options, const AcquireOptions& how,
                             std::stop_token also, AsyncLeaseReport done) noexcept {
    begin_acquire(client, target, options, how, std::move(also),
                  [done = std::move(done)](const Status& st, Lease l) {
                      done(st.ec, st.message(), std::move(l));
                  });
}

void start_release_reporting(Lease lease, AsyncReport done) noexcept {
    async_release(std::move(lease),
                  [done = std::move(done)](const Status& st) { done(st.ec, st.message()); });
}

void LoopHandle::post(std::function<void()> fn) const noexcept {
    if (!impl_) return;
    try {
        static_cast<ClientImpl*>(impl_.get())->loop().post(std::move(fn));
    } catch (...) {  // NOLINT(bugprone-empty-catch): documented: dropped when out of memory
    }
}

bool LoopHandle::here() const noexcept {
    try {
        return impl_ && static_cast<ClientImpl*>(impl_.get())->loop().here();
    } catch (...) {
        return false;
    }
}

void post_batched(LoopCalls calls) noexcept {
    try {
        for (std::size_t i = 0; i < calls.size(); ++i) {
            if (!calls[i].second) continue;
            auto loop = calls[i].first;
            std::vector<std::function<void()>> batch;
            for (std::size_t j = i; j < calls.size(); ++j)
                if (calls[j].second && calls[j].first == loop)
                    batch.push_back(std::exchange(calls[j].second, {}));
            loop.post([batch = std::move(batch)] {
                for (const auto& call : batch) call();
            });
        }
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory: dropped, as post() drops
    }
}

LoopHandle loop_of(const Client& client) noexcept {
    LoopHandle h;
    h.impl_ = ClientAccess::impl(client);
    return h;
}

LoopHandle loop_of(Lease& lease) noexcept {
    LoopHandle h;
    auto s = take_state(lease);
    if (s) h.impl_ = s->client;
    lease = make_lease(std::move(s));
    return h;
}

void start_release(Lease lease, AsyncDone done) noexcept {
    async_release(std::move(lease), [done = std::move(done)](const Status& st) { done(st.ec); });
}

}  // namespace deadbolt::detail
