// The addon's entry: setup(hooks) makes the environment's state; the classes are defined here.
#include "addon.hpp"

#include <cmath>

#include "deadbolt/error.hpp"

namespace deadbolt::node {

namespace {

// The class of the package's errors (lib/errors.js) for ec, in ErrorClass's order (so that
// `instanceof NotAcquiredError` works).
const char* class_for(std::error_code ec) {
    static constexpr const char* kNames[] = {
        "NotAcquiredError", "LockLostError", "CancelledError", "UsageError",
        "ConnectionError",  "ServerError",   "LockError",      "DeadboltError"};
    return kNames[static_cast<int>(class_of(ec))];
}

// setup({makeError, lost}): called once by the package when it loads the addon.
Napi::Value setup(const Napi::CallbackInfo& info) {
    auto env = info.Env();
    auto hooks = info[0].As<Napi::Object>();
    auto& a = Addon::of(env);
    a.make_error = Napi::Persistent(hooks.Get("makeError").As<Napi::Function>());
    a.lost = Napi::Persistent(hooks.Get("lost").As<Napi::Function>());
    return env.Undefined();
}

}  // namespace

Napi::Object init(Napi::Env env, Napi::Object exports) {
    auto* a = new Addon;
    a->channel = Channel::open(env);
    // Registered after the channel's, so it runs before it: the waits' ends can still post.
    env.AddCleanupHook([c = a->cancels] { c->cancel_all(); });
    env.SetInstanceData(a);
    exports.Set("setup", Napi::Function::New(env, setup));
    exports.Set("flush", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
                    Addon::of(info.Env()).channel->flush();
                }));
    define_lease(env, exports);
    define_client(env, exports);
    define_limiter(env, exports);
    define_semaphore(env, exports);
    return exports;
}

Napi::Value error_of(Napi::Env env, std::error_code ec, const std::string& why) {
    auto name = ec.category() == category() ? code_name(ec) : std::string_view{};
    std::string text = why.empty() ? ec.message() : why;
    auto& make = Addon::of(env).make_error;
    if (make.IsEmpty()) return Napi::Error::New(env, text).Value();
    return make.Call({Napi::String::New(env, class_for(ec)), Napi::String::New(env, text),
                      Napi::String::New(env, std::string(name)),
                      Napi::Boolean::New(env, ec && is_retryable(ec))});
}

Napi::Value lost_error(Napi::Env env, const std::string& name, std::error_code why) {
    auto code = why.category() == category() ? code_name(why) : std::string_view{};
    return Addon::of(env).make_error.Call(
        {Napi::String::New(env, "LockLostError"),
         Napi::String::New(env, "the lease on '" + name + "' was lost: " + why.message()),
         Napi::String::New(env, std::string(code)), Napi::Boolean::New(env, false)});
}

void refuse(Napi::Env env, const std::string& why) {
    throw Napi::Error(env, error_of(env, make_error_code(errc::invalid_argument), why));
}

std::string name_of(const Napi::Value& v, const char* what) {
    if (v.IsString()) return v.As<Napi::String>().Utf8Value();
    if (v.IsBuffer()) {
        auto b = v.As<Napi::Buffer<char>>();
        return {b.Data(), b.Length()};
    }
    refuse(v.Env(), std::string(what) + " must be a string or a Buffer");
}

Napi::Value js_name(Napi::Env env, const std::string& name) {
    auto s = Napi::String::New(env, name);
    if (s.Utf8Value() == name) return s;  // not valid UTF-8 would not survive the round trip
    return Napi::Buffer<char>::Copy(env, name.data(), name.size());
}

std::chrono::milliseconds ms_of(const Napi::Value& v, const char* what) {
    constexpr double kMost = 100.0 * 365 * 24 * 3600 * 1000;  // fits every deadline
    double ms = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : NAN;
    if (!std::isfinite(ms) || ms < 0 || ms > kMost)
        refuse(v.Env(), std::string(what) + " must be a number of milliseconds from 0 to " +
                            "100 years, not " + v.ToString().Utf8Value());
    return std::chrono::milliseconds(static_cast<long long>(std::ceil(ms)));
}

std::optional<std::chrono::steady_clock::time_point> deadline_of(const Napi::Value& v) {
    if (v.IsUndefined() || v.IsNull()) return std::nullopt;
    return std::chrono::steady_clock::now() + ms_of(v, "timeout");
}

}  // namespace deadbolt::node

namespace {
Napi::Object init_addon(Napi::Env env, Napi::Object exports) {
    return deadbolt::node::init(env, exports);
}
}  // namespace

NODE_API_MODULE(deadbolt, init_addon)
