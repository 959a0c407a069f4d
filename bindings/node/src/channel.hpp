// The way back to JavaScript: deadbolt's threads (its event loop, the renewer, the threads
// that run blocking calls) never touch V8; they post jobs that run on the JS thread, through
// one thread-safe function per Node.js environment.
#pragma once

#include <napi.h>

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "deadbolt/async.hpp"

namespace deadbolt::node {

using Job = std::function<void(Napi::Env)>;

/// One environment's channel. post() is for any thread; the rest is for the JS thread.
/// Jobs must not own JS references: a job dropped at teardown is destroyed off that thread.
class Channel : public std::enable_shared_from_this<Channel> {
  public:
    /// Makes env's channel (at module load).
    static std::shared_ptr<Channel> open(Napi::Env env);

    /// Runs job on the JS thread soon, in the order posted; a job that throws is reported as
    /// an uncaught exception. Dropped (never run) once the environment is torn down.
    /// Never throws.
    void post(Job job) noexcept;
    /// Batching both ways, so that each side wakes the other once per batch rather than once
    /// per operation (on one shared CPU, each wake is a context switch both ways):
    /// send() keeps start for loop's thread until flush() (JS thread only; the package
    /// flushes once per turn of the JS event loop, from a microtask);
    void send(const detail::LoopHandle& loop, std::function<void()> start);
    /// flush() hands what send() kept to each loop in one post (JS thread only);
    void flush();
    /// deliver(), on loop's thread, queues job for the JS thread behind the replies that loop
    /// has ready now: they reach JS together, as one call (elsewhere it is post()).
    void deliver(const detail::LoopHandle& loop, Job job) noexcept;

    /// Keeps the process alive until the matching let_go(): an operation is pending whose
    /// result a promise waits for. JS thread only.
    void keep(Napi::Env env);
    void let_go(Napi::Env env);

  private:
    static void run(Napi::Env env, Napi::Function /*unused*/, Channel* /*unused*/, Job* job);
    static void call(Napi::Env env, Job& job) noexcept;
    using Tsfn = Napi::TypedThreadSafeFunction<Channel, Job, &Channel::run>;

    std::mutex m_;
    bool closed_ = false;  // the environment is being torn down: post() drops jobs
    Tsfn tsfn_;
    int kept_ = 0;
    detail::LoopCalls outbox_;   // JS thread
    std::vector<Job> inbox_;     // under m_: results waiting for the JS thread
    bool inbox_posted_ = false;  // under m_: a loop will hand inbox_ over
};

}  // namespace deadbolt::node
