// The native Semaphore (permits across processes, each a lease, which the package's Lock
// class drives as it drives a lock's request) and CountDownLatch. Their waits block in the C++
// library, so they run off the JS thread, and JS can cancel them.
#include "cancels.hpp"
#include "deadbolt/deadbolt.hpp"
#include "lease.hpp"
#include "offload.hpp"
#include "options.hpp"

namespace deadbolt::node {

namespace {

class JsSemaphore : public Napi::ObjectWrap<JsSemaphore> {
  public:
    // new NativeSemaphore(client, name, permits, options, requestId)
    explicit JsSemaphore(const Napi::CallbackInfo& info)
        : Napi::ObjectWrap<JsSemaphore>(info), cancels_(Addon::of(info.Env()).cancels) {
        guarded(info.Env(), [&] {
            double permits = info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : 0;
            if (!(permits >= 1 && permits <= 1e6) || permits != static_cast<int>(permits))
                refuse(info.Env(), "permits must be a whole number from 1 to 1000000");
            auto options = mutex_options(info[3], wait_id(info[4]));
            semaphore_.emplace(client_of(info[0]).permit_semaphore(
                name_of(info[1], "name"), static_cast<int>(permits), options));
        });
    }

    // acquire(timeoutMs | undefined, cancelId): a promise of a NativeLease (the permit).
    Napi::Value acquire(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            AcquireOptions how;
            how.deadline = deadline_of(info[0]);
            auto [token, forget] = cancellable(cancels_, wait_id(info[1]));
            how.cancel = token;
            return offload(
                env, [s = *semaphore_, how] { return std::make_shared<Granted>(s.acquire(how)); },
                [](Napi::Env e, const std::shared_ptr<Granted>& g) {
                    return JsLease::make(e, std::move(g->lease));
                },
                forget);
        });
    }

    Napi::Value cancel(const Napi::CallbackInfo& info) {
        cancels_->cancel(wait_id(info[0]));
        return info.Env().Undefined();
    }

    Napi::Value available(const Napi::CallbackInfo& info) {
        return offload(
            info.Env(), [s = *semaphore_] { return s.available(); },
            [](Napi::Env e, int n) { return Napi::Number::New(e, n); });
    }

    Napi::Value permits(const Napi::CallbackInfo& info) {
        return Napi::Number::New(info.Env(), semaphore_->max());
    }

  private:
    std::optional<PermitExpirableSemaphore> semaphore_;
    std::shared_ptr<Cancels> cancels_;  // the environment's (Addon::cancels)
};

class JsLatch : public Napi::ObjectWrap<JsLatch> {
  public:
    // new NativeLatch(client, name)
    explicit JsLatch(const Napi::CallbackInfo& info)
        : Napi::ObjectWrap<JsLatch>(info), cancels_(Addon::of(info.Env()).cancels) {
        guarded(info.Env(),
                [&] { latch_.emplace(client_of(info[0]).latch(name_of(info[1], "name"))); });
    }

    // trySetCount(count, ttlMs): whether this call set it (false: already counting).
    Napi::Value try_set_count(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            double count = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : 0;
            if (!(count >= 1 && count <= 9007199254740991.0) ||
                count != static_cast<double>(static_cast<std::int64_t>(count)))
                refuse(env, "count must be a whole number of at least 1");
            auto ttl = info[1].IsUndefined() ? std::chrono::milliseconds(std::chrono::hours(24))
                                             : ms_of(info[1], "ttl");
            return offload(
                env,
                [l = *latch_, n = static_cast<std::int64_t>(count), ttl] {
                    return l.try_set_count(n, ttl);
                },
                [](Napi::Env e, bool set) { return Napi::Boolean::New(e, set); });
        });
    }

    Napi::Value count_down(const Napi::CallbackInfo& info) {
        return offload(
            info.Env(), [l = *latch_] { return l.count_down(); },
            [](Napi::Env e, bool reached) { return Napi::Boolean::New(e, reached); });
    }

    Napi::Value count(const Napi::CallbackInfo& info) {
        return offload(
            info.Env(), [l = *latch_] { return l.count(); },
            [](Napi::Env e, std::int64_t n) {
                return Napi::Number::New(e, static_cast<double>(n));
            });
    }

    // wait(timeoutMs | undefined, cancelId): whether the count reached zero in time.
    Napi::Value wait(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            auto deadline = deadline_of(info[0]);
            auto [token, forget] = cancellable(cancels_, wait_id(info[1]));
            return offload(
                env, [l = *latch_, deadline, t = token] { return l.wait_until(deadline, t); },
                [](Napi::Env e, bool zero) { return Napi::Boolean::New(e, zero); }, forget);
        });
    }

    Napi::Value cancel(const Napi::CallbackInfo& info) {
        cancels_->cancel(wait_id(info[0]));
        return info.Env().Undefined();
    }

  private:
    std::optional<CountDownLatch> latch_;
    std::shared_ptr<Cancels> cancels_;  // the environment's (Addon::cancels)
};

}  // namespace

void define_semaphore(Napi::Env env, Napi::Object exports) {
    using S = JsSemaphore;
    exports.Set("NativeSemaphore", S::DefineClass(env, "NativeSemaphore",
                                                  {S::InstanceMethod<&S::acquire>("acquire"),
                                                   S::InstanceMethod<&S::cancel>("cancel"),
                                                   S::InstanceMethod<&S::available>("available"),
                                                   S::InstanceAccessor<&S::permits>("permits")}));
    using L = JsLatch;
    exports.Set("NativeLatch", L::DefineClass(env, "NativeLatch",
                                              {L::InstanceMethod<&L::try_set_count>("trySetCount"),
                                               L::InstanceMethod<&L::count_down>("countDown"),
                                               L::InstanceMethod<&L::count>("count"),
                                               L::InstanceMethod<&L::wait>("wait"),
                                               L::InstanceMethod<&L::cancel>("cancel")}));
}

}  // namespace deadbolt::node
