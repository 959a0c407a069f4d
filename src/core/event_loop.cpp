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
    // Behind what was posted before: that runs first. Called from the loop's own thread (the
    // client died in one of its handlers), the thread finishes by itself, draining the same
    // way; what it runs must then hold what it uses (no raw pointers into the client).
    asio::post(state_->io, [s = state_.get()] { s->io.stop(); });
    join_or_detach(std::move(thread_));
}

void EventLoop::post(std::function<void()> fn) {
    asio::post(state_->io, std::move(fn));
}

void EventLoop::run(const std::shared_ptr<State>& s) {
    auto work = asio::make_work_guard(s->io);
    s->io.run();
    // What was ready at the stop still runs (closing sockets, completing operations), so
    // nothing is left to destroy with the context but idle handlers.
    work.reset();
    s->io.restart();
    while (s->io.poll() > 0) {
    }
}

}  // namespace deadbolt::detail
