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
    call(env, *owned);
}

void Channel::call(Napi::Env env, Job& job) noexcept {
    // Nothing may leave here: Node's frames are C. A job settles its own promise; what it
    // throws past that is reported as uncaught, if the environment can still throw.
    try {
        job(env);
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

void Channel::send(const detail::LoopHandle& loop, std::function<void()> start) {
    outbox_.emplace_back(loop, std::move(start));
}

void Channel::flush() {
    detail::post_batched(std::exchange(outbox_, {}));
}

void Channel::deliver(const detail::LoopHandle& loop, Job job) noexcept {
    if (!loop.here()) return post(std::move(job));
    try {
        std::lock_guard g(m_);
        inbox_.push_back(std::move(job));
        if (inbox_posted_) return;
        inbox_posted_ = true;
    } catch (...) {  // out of memory: the job is lost, as when the environment goes
        return;
    }
    // Runs after the handlers the loop has ready now (the other replies of this burst).
    loop.post([self = shared_from_this()] {
        std::vector<Job> jobs;
        {
            std::lock_guard g(self->m_);
            jobs.swap(self->inbox_);
            self->inbox_posted_ = false;
        }
        self->post([jobs = std::make_shared<std::vector<Job>>(std::move(jobs))](Napi::Env env) {
            for (auto& job : *jobs) call(env, job);
        });
    });
}

void Channel::keep(Napi::Env env) {
    if (kept_++ == 0) tsfn_.Ref(env);
}

void Channel::let_go(Napi::Env env) {
    if (--kept_ == 0) tsfn_.Unref(env);
}

}  // namespace deadbolt::node
