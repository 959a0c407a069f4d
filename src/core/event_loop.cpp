#include "core/event_loop.hpp"

#include <sched.h>
#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>

#include <algorithm>

#include "core/cpu_limit.hpp"

namespace deadbolt::detail {

unsigned EventLoop::usable_cpus() {
    unsigned cpus = std::max(1U, std::thread::hardware_concurrency());
#ifdef __linux__
    // The CPUs this thread may run on (taskset, a container's cpuset), which its threads
    // inherit, not the machine's.
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = static_cast<unsigned>(CPU_COUNT(&set));
    // A container's CPU limit: the threads may run on every CPU, but a spin spends the time
    // the others then wait for, throttled.
    cpus = whole_cpus(cpus, this_process_cpu_limit());
#endif
    return std::max(1U, cpus);
}

EventLoop::EventLoop(std::chrono::microseconds spin) : state_(std::make_shared<State>()) {
    // On one CPU, spinning only keeps the threads the loop just woke (callers of wait(), the
    // server's, the peer's) from running: pinned there, 16 threads each blocking on the loop
    // made 5,600 cycles/s with a 50 us spin and 32,700 without.
    if (usable_cpus() <= 1) spin = {};
    thread_ = Background([s = state_, spin] { run(s, spin); }, "deadbolt-loop");
    state_->id = thread_.id();
}

EventLoop::~EventLoop() {
    // Behind what was posted before: that runs first. Called from the loop's own thread (the
    // client died in one of its handlers), the thread finishes by itself, draining the same
    // way; what it runs must then hold what it uses (no raw pointers into the client).
    asio::post(state_->io, [s = state_.get()] { s->io.stop(); });
    thread_.end();
}

void EventLoop::post(std::function<void()> fn) {
    asio::post(state_->io, std::move(fn));
}

std::function<void(std::function<void()>)> EventLoop::poster() const {
    return [s = state_](std::function<void()> fn) { asio::post(s->io, std::move(fn)); };
}

void EventLoop::run(const std::shared_ptr<State>& s, std::chrono::microseconds spin) {
    using Steady = std::chrono::steady_clock;
    auto work = asio::make_work_guard(s->io);
    // Sleeping in epoll and being woken by the next reply costs two scheduler trips per
    // request; while replies keep coming, polling for them is cheaper. Only after work ran,
    // and only for `spin` after the last of it: an idle client sleeps.
    while (s->io.run_one() > 0) {
        for (auto until = Steady::now() + spin; Steady::now() < until && !s->io.stopped();)
            if (s->io.poll() > 0) until = Steady::now() + spin;
    }
    // What was ready at the stop still runs (closing sockets, completing operations), so
    // nothing is left to destroy with the context but idle handlers.
    work.reset();
    s->io.restart();
    while (s->io.poll() > 0) {
    }
}

}  // namespace deadbolt::detail
