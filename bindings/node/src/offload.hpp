// Blocking calls of the C++ library (connect, status, extend, a rate limiter's wait, ...) run
// on a thread of their own, never on the JS thread; their result settles a promise there.
#pragma once

#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "addon.hpp"

namespace deadbolt::node {

/// Runs work() on a new thread and returns a promise settled on the JS thread: resolved with
/// make(env, result), or rejected with the package's error for what work threw (an error
/// make throws rejects it too); after() runs on the JS thread first, either way. The process
/// stays alive until then.
template <class Work, class Make, class After = void (*)()>
Napi::Promise offload(
    Napi::Env env, Work work, Make make, After after = [] {}) {
    using R = decltype(work());
    struct Outcome {
        std::optional<R> value;
        std::error_code ec;
        std::string why;
    };
    auto channel = Addon::of(env).channel;
    auto promise = Napi::Promise::Deferred::New(env);
    // keep() after the thread exists (its job runs on this thread, so not before this returns):
    // a thread that cannot start rejects the promise instead of keeping the process alive.
    std::thread thread([channel, promise, work = std::move(work), make = std::move(make),
                        after = std::move(after)]() mutable {
        auto out = std::make_shared<Outcome>();
        try {
            out->value.emplace(work());
        } catch (const std::system_error& e) {
            out->ec = e.code();
            out->why = e.what();
        } catch (const std::exception& e) {
            out->why = e.what();
        }
        channel->post([channel, promise, out, make, after](Napi::Env env) {
            channel->let_go(env);
            after();
            settle(env, promise, [&]() -> Napi::Value {
                if (!out->value) throw Napi::Error(env, error_of(env, out->ec, out->why));
                return guarded(env, [&] { return make(env, *out->value); });
            });
        });
    });
    thread.detach();
    channel->keep(env);
    return promise.Promise();
}

/// What a void call's work returns, for offload.
struct Done {};

}  // namespace deadbolt::node
