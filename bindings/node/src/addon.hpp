// What every file of the Node.js binding shares: the environment's instance data (the
// channel back to JS, the package's hooks, the classes made from C++), errors and names.
#pragma once

#include <napi.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "cancels.hpp"
#include "channel.hpp"
#include "deadbolt/client.hpp"

namespace deadbolt::node {

/// One environment's state of the addon, made at load and destroyed on its JS thread.
struct Addon {
    std::shared_ptr<Channel> channel;
    std::shared_ptr<Cancels> cancels = std::make_shared<Cancels>();  // every wait of this env
    Napi::FunctionReference make_error;  // the package's (className, message, code, retryable)
    Napi::FunctionReference lost;        // the package's (requestId, name, error)
    Napi::FunctionReference lease_class;
    Napi::FunctionReference client_class;
    Napi::FunctionReference request_class;

    static Addon& of(Napi::Env env) { return *env.GetInstanceData<Addon>(); }
};

/// The package's Error for ec (lib/errors.js's class for it) carrying why (ec's own text when
/// why is empty); a plain DeadboltError for an empty ec.
Napi::Value error_of(Napi::Env env, std::error_code ec, const std::string& why);

/// Runs f, turning what the C++ library throws into the package's error, thrown in JS.
template <class F>
auto guarded(Napi::Env env, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const Napi::Error&) {
        throw;
    } catch (const std::system_error& e) {
        throw Napi::Error(env, error_of(env, e.code(), e.what()));
    }
}

/// Resolves promise with what value() returns, or rejects it with what value() throws: every
/// path settles it. JS thread only.
template <class F>
void settle(Napi::Env env, const Napi::Promise::Deferred& promise, F&& value) {
    try {
        promise.Resolve(value());
    } catch (const Napi::Error& e) {
        promise.Reject(e.Value());
    } catch (const std::exception& e) {
        promise.Reject(Napi::Error::New(env, e.what()).Value());
    }
}

/// The package's LockLostError for a lease of name lost with why (its code stays why's).
Napi::Value lost_error(Napi::Env env, const std::string& name, std::error_code why);

/// A lock name or key from JS: a string (as UTF-8) or a Buffer (its bytes). Throws the
/// package's UsageError for anything else, naming what.
std::string name_of(const Napi::Value& v, const char* what);
/// name for JS: a string when it is valid UTF-8, else a Buffer of its bytes.
Napi::Value js_name(Napi::Env env, const std::string& name);

/// A duration in milliseconds from JS: a finite number from 0 to 100 years (fractions round
/// up). Throws the package's UsageError naming what otherwise.
std::chrono::milliseconds ms_of(const Napi::Value& v, const char* what);
/// A timeout from JS: undefined or null waits as long as it takes.
std::optional<std::chrono::steady_clock::time_point> deadline_of(const Napi::Value& v);
/// Throws the package's UsageError carrying why.
[[noreturn]] void refuse(Napi::Env env, const std::string& why);

/// The C++ Client of a NativeClient. Throws the package's UsageError for anything else.
const Client& client_of(const Napi::Value& v);

/// The module's exports (NODE_API_MODULE's function).
Napi::Object init(Napi::Env env, Napi::Object exports);

void define_client(Napi::Env env, Napi::Object exports);
void define_lease(Napi::Env env, Napi::Object exports);
void define_limiter(Napi::Env env, Napi::Object exports);
void define_semaphore(Napi::Env env, Napi::Object exports);

}  // namespace deadbolt::node
