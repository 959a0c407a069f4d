// EventLoop: one thread per client that runs the asynchronous API's operations (DESIGN
// section 12). Started at the first asynchronous call (or, on the engines whose blocking calls
// it serves too, Redlock, etcd and ZooKeeper, the first call), so Redis's blocking users never
// pay for it.
// Everything posted to it runs on that one thread, in order: operations need no locks of
// their own, and one thread multiplexes every socket it is given.
#pragma once

#include <asio/io_context.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/background.hpp"

namespace deadbolt::detail {

class EventLoop {
  public:
    /// spin: how long the loop keeps polling after it ran something before it sleeps
    /// (ClientOptions::loop_spin); none when the calling thread may use one CPU only.
    explicit EventLoop(std::chrono::microseconds spin = {});
    /// Stops the loop: work posted before runs first. Joins the thread, or lets it finish by
    /// itself when called from it.
    ~EventLoop();
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    /// The context sockets and timers of the loop's operations belong to.
    asio::io_context& io() { return state_->io; }
    /// Runs fn on the loop's thread.
    void post(std::function<void()> fn);
    /// A post() that stays safe once this loop is gone (what it posts then never runs), for
    /// completions on other libraries' threads that may come after the client died.
    std::function<void(std::function<void()>)> poster() const;
    /// Runs start(deliver) on the loop and returns what it delivers, blocking the caller (a
    /// blocking call served by the loop). On the loop's own thread (a blocking call from a
    /// completion handler) it runs the loop's handlers meanwhile instead of deadlocking.
    /// deliver must be called exactly once.
    template <class T>
    T wait(std::function<void(std::function<void(T)>)> start);
    /// Keeps the context alive while held: what owns sockets or timers of it holds this.
    std::shared_ptr<void> keepalive() const { return state_; }
    /// True on the loop's own thread.
    bool here() const { return std::this_thread::get_id() == state_->id; }

    /// How many CPUs the calling thread may run on (its affinity), and its cgroup lets it use
    /// whole (a container's CPU limit), at least 1.
    static unsigned usable_cpus();

  private:
    struct State {
        asio::io_context io;
        std::thread::id id;
    };
    static void run(const std::shared_ptr<State>& s, std::chrono::microseconds spin);

    std::shared_ptr<State> state_;  // shared with the thread, which may outlive this
    Background thread_;
};

template <class T>
T EventLoop::wait(std::function<void(std::function<void(T)>)> start) {
    struct Box {
        std::mutex m;
        std::condition_variable cv;
        std::optional<T> value;
    };
    auto box = std::make_shared<Box>();
    auto deliver = [box](T v) {
        {
            std::lock_guard lk(box->m);
            box->value.emplace(std::move(v));
        }
        box->cv.notify_one();
    };
    if (here()) {
        start(deliver);
        while (!box->value) io().run_one();
        return std::move(*box->value);
    }
    post([start = std::move(start), deliver] { start(deliver); });
    std::unique_lock lk(box->m);
    box->cv.wait(lk, [&] { return box->value.has_value(); });
    return std::move(*box->value);
}

}  // namespace deadbolt::detail
