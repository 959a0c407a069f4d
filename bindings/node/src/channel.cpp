#include "channel.hpp"

#include <exception>

namespace deadbolt::node {

std::shared_ptr<Channel> Channel::open(Napi::Env env) {
    auto c = std::make_shared<Channel>();
    c->tsfn_ = Tsfn::New(env, "deadbolt", 0, 1, c.get());
    c->tsfn_.Unref(env);
    // Cleanup hooks run in reverse order, so this one runs before Node closes the function:
    // from then on post() drops its jobs instead of calling into a closing function.
    env.AddCleanupHook([c] {
        std::lock_guard g(c->m_);
        c->closed_ = true;
    });
    return c;
}

void Channel::run(Napi::Env env, Napi::Function /*unused*/, Channel* /*unused*/, Job* job) {
    std::unique_ptr<Job> owned(job);
    if (env == nullptr || !owned) return;  // the environment is going: free the job only
    // Nothing may leave here: Node's frames are C. A job settles its own promise; what it
    // throws past that is reported as uncaught, if the environment can still throw.
    try {
        (*owned)(env);
    } catch (const Napi::Error& e) {
        e.ThrowAsJavaScriptException();
    } catch (const std::exception& e) {
        Napi::Error::New(env, e.what()).ThrowAsJavaScriptException();
    } catch (...) {  // NOLINT(bugprone-empty-catch): nothing else can be reported here
    }
}

void Channel::post(Job job) noexcept {
    try {
        auto owned = std::make_unique<Job>(std::move(job));
        std::lock_guard g(m_);
        if (closed_) return;
        if (tsfn_.NonBlockingCall(owned.get()) == napi_ok) static_cast<void>(owned.release());
    } catch (...) {  // out of memory: the job is lost, as when the environment goes
    }
}

void Channel::keep(Napi::Env env) {
    if (kept_++ == 0) tsfn_.Ref(env);
}

void Channel::let_go(Napi::Env env) {
    if (--kept_ == 0) tsfn_.Unref(env);
}

}  // namespace deadbolt::node
