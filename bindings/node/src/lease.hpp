// The native Lease: one holding of a lock, which the package's Lease wraps.
#pragma once

#include "addon.hpp"
#include "deadbolt/lease.hpp"

namespace deadbolt::node {

/// A granted lease on its way to JS: released in the background (never blocking the thread
/// that drops it, or the engine's event loop) if it does not get there.
struct Granted {
    explicit Granted(Lease l) : lease(std::move(l)) {}
    Granted(const Granted&) = delete;
    Granted& operator=(const Granted&) = delete;
    ~Granted();
    Lease lease;
};

class JsLease : public Napi::ObjectWrap<JsLease> {
  public:
    explicit JsLease(const Napi::CallbackInfo& info);
    /// Once JS lets go of it and no call of its own (extend, isCurrent, putIfCurrent) still
    /// runs, a lease still held starts its release (never blocking the JS thread).
    ~JsLease() override = default;
    JsLease(const JsLease&) = delete;
    JsLease& operator=(const JsLease&) = delete;

    /// A new JS object holding l. JS thread only.
    static Napi::Object make(Napi::Env env, Lease l);
    static Napi::Function define(Napi::Env env);

  private:
    Napi::Value name(const Napi::CallbackInfo& info);
    Napi::Value token(const Napi::CallbackInfo& info);
    Napi::Value fence(const Napi::CallbackInfo& info);
    Napi::Value fences(const Napi::CallbackInfo& info);
    Napi::Value remaining(const Napi::CallbackInfo& info);
    Napi::Value valid(const Napi::CallbackInfo& info);
    Napi::Value lost(const Napi::CallbackInfo& info);
    Napi::Value held(const Napi::CallbackInfo& info);
    Napi::Value release(const Napi::CallbackInfo& info);
    Napi::Value extend(const Napi::CallbackInfo& info);
    Napi::Value is_current(const Napi::CallbackInfo& info);
    Napi::Value put_if_current(const Napi::CallbackInfo& info);

    // Shared with the calls that run on other threads: released after the last of them.
    std::shared_ptr<Granted> own_ = std::make_shared<Granted>(Lease{});
};

}  // namespace deadbolt::node
