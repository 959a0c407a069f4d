// EventLoop: one thread per client that runs the asynchronous API's operations (DESIGN
// section 12). Started at the first asynchronous call, so blocking users never pay for it.
// Everything posted to it runs on that one thread, in order: operations need no locks of
// their own, and one thread multiplexes every socket it is given.
#pragma once

#include <asio/io_context.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace deadbolt::detail {

class EventLoop {
  public:
    EventLoop();
    /// Stops the loop: work posted before runs first. Joins the thread, or lets it finish by
    /// itself when called from it.
    ~EventLoop();
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    /// The context sockets and timers of the loop's operations belong to.
    asio::io_context& io() { return state_->io; }
    /// Runs fn on the loop's thread.
    void post(std::function<void()> fn);
    /// Runs fn on the loop's thread between handlers, where it may run the context itself (a
    /// blocking connect does).
    void defer(std::function<void()> fn);
    /// Keeps the context alive while held: what owns sockets or timers of it holds this.
    std::shared_ptr<void> keepalive() const { return state_; }
    /// True on the loop's own thread.
    bool here() const { return std::this_thread::get_id() == state_->id; }

  private:
    struct State {
        asio::io_context io;
        std::mutex m;
        std::deque<std::function<void()>> deferred;
        bool stopping = false;
        std::thread::id id;
    };
    static void run(const std::shared_ptr<State>& s);

    std::shared_ptr<State> state_;  // shared with the thread, which may outlive this
    std::thread thread_;
};

}  // namespace deadbolt::detail
