#include "core/event_loop.hpp"

#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>

#include "core/threads.hpp"

namespace deadbolt::detail {

EventLoop::EventLoop() : state_(std::make_shared<State>()) {
    thread_ = std::thread([s = state_] { run(s); });
    state_->id = thread_.get_id();
}

EventLoop::~EventLoop() {
    {
        std::lock_guard lk(state_->m);
        state_->stopping = true;
    }
    asio::post(state_->io, [] {});  // ends a wait for the next handler
    join_or_detach(std::move(thread_));
}

void EventLoop::post(std::function<void()> fn) {
    asio::post(state_->io, std::move(fn));
}

void EventLoop::defer(std::function<void()> fn) {
    {
        std::lock_guard lk(state_->m);
        state_->deferred.push_back(std::move(fn));
    }
    asio::post(state_->io, [] {});  // the loop looks at the deferred work after a handler
}

void EventLoop::run(const std::shared_ptr<State>& s) {
    auto work = asio::make_work_guard(s->io);
    for (;;) {
        std::deque<std::function<void()>> now;
        bool stopping = false;
        {
            std::lock_guard lk(s->m);
            now.swap(s->deferred);
            stopping = s->stopping;
        }
        for (auto& fn : now) fn();
        if (stopping) break;
        if (s->io.stopped()) s->io.restart();
        s->io.run_one();
    }
    // What was posted before the stop still runs (closing sockets, completing operations),
    // so nothing is left to destroy with the context but idle handlers.
    work.reset();
    if (s->io.stopped()) s->io.restart();
    while (s->io.poll() > 0) {
    }
}

}  // namespace deadbolt::detail
