// The native RateLimiter: a token bucket shared by every client of its name. Its calls block
// in the C++ library, so they run off the JS thread; a wait can be cancelled.
#include "cancels.hpp"
#include "deadbolt/deadbolt.hpp"
#include "offload.hpp"

namespace deadbolt::node {

namespace {

std::int64_t count_of(const Napi::Value& v, const char* what) {
    double d = v.IsUndefined() ? 1 : (v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1);
    if (!(d >= 1 && d <= 1e15) || d != static_cast<double>(static_cast<std::int64_t>(d)))
        refuse(v.Env(), std::string(what) + " must be a whole number of at least 1");
    return static_cast<std::int64_t>(d);
}

class JsRateLimiter : public Napi::ObjectWrap<JsRateLimiter> {
  public:
    // new NativeRateLimiter(client, name, rate, perMs, burst)
    explicit JsRateLimiter(const Napi::CallbackInfo& info)
        : Napi::ObjectWrap<JsRateLimiter>(info), cancels_(Addon::of(info.Env()).cancels) {
        guarded(info.Env(), [&] {
            RateLimit limit{.rate = count_of(info[2], "rate"),
                            .per = ms_of(info[3], "per"),
                            .burst = count_of(info[4], "burst")};
            limiter_.emplace(client_of(info[0]).rate_limiter(name_of(info[1], "name"), limit));
        });
    }

    // tryAcquire(n): a promise of {allowed, retryIn, remaining}.
    Napi::Value try_acquire(const Napi::CallbackInfo& info) {
        auto n = guarded(info.Env(), [&] { return count_of(info[0], "n"); });
        return offload(
            info.Env(), [l = *limiter_, n] { return l.try_acquire(n); },
            [](Napi::Env e, const RateDecision& d) {
                auto o = Napi::Object::New(e);
                o.Set("allowed", d.allowed);
                o.Set("retryIn", static_cast<double>(d.retry_in.count()));
                o.Set("remaining", static_cast<double>(d.remaining));
                return o;
            });
    }

    // acquire(n, timeoutMs | undefined, cancelId): a promise of whether the tokens were taken.
    Napi::Value acquire(const Napi::CallbackInfo& info) {
        auto env = info.Env();
        return guarded(env, [&]() -> Napi::Value {
            auto n = count_of(info[0], "n");
            AcquireOptions how;
            how.deadline = deadline_of(info[1]);
            auto [token, forget] = cancellable(cancels_, wait_id(info[2]));
            how.cancel = token;
            return offload(
                env, [l = *limiter_, n, how] { return l.acquire(n, how); },
                [](Napi::Env e, bool taken) { return Napi::Boolean::New(e, taken); }, forget);
        });
    }

    Napi::Value cancel(const Napi::CallbackInfo& info) {
        cancels_->cancel(info[0].As<Napi::Number>().Uint32Value());
        return info.Env().Undefined();
    }

    Napi::Value available(const Napi::CallbackInfo& info) {
        return offload(
            info.Env(), [l = *limiter_] { return l.available(); },
            [](Napi::Env e, std::int64_t n) {
                return Napi::Number::New(e, static_cast<double>(n));
            });
    }

  private:
    std::optional<RateLimiter> limiter_;
    std::shared_ptr<Cancels> cancels_;  // the environment's (Addon::cancels)
};

}  // namespace

void define_limiter(Napi::Env env, Napi::Object exports) {
    exports.Set("NativeRateLimiter",
                JsRateLimiter::DefineClass(
                    env, "NativeRateLimiter",
                    {JsRateLimiter::InstanceMethod<&JsRateLimiter::try_acquire>("tryAcquire"),
                     JsRateLimiter::InstanceMethod<&JsRateLimiter::acquire>("acquire"),
                     JsRateLimiter::InstanceMethod<&JsRateLimiter::cancel>("cancel"),
                     JsRateLimiter::InstanceMethod<&JsRateLimiter::available>("available")}));
}

}  // namespace deadbolt::node
