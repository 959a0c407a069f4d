// AsyncConnection: a pipelined command connection that lives on the client's event loop. Any
// number of requests are in flight at once, written together and answered in order; each
// completes with a callback on the loop. Loop thread only. (The blocking Connection serves
// blocking callers on their own threads; this one serves the asynchronous API.)
#pragma once

#include <asio/steady_timer.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/redis/commands.hpp"
#include "backends/redis/net/endpoint.hpp"
#include "backends/redis/net/resp.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/net/transport.hpp"
#include "core/event_loop.hpp"

namespace deadbolt::detail {

class AsyncConnection : public std::enable_shared_from_this<AsyncConnection> {
  public:
    using Done = std::function<void(Status, std::vector<Reply>)>;
    AsyncConnection(EventLoop& loop, Endpoint ep);
    AsyncConnection(const AsyncConnection&) = delete;
    AsyncConnection& operator=(const AsyncConnection&) = delete;

    /// Sends count encoded commands; done(status, replies) once, on the loop. Errors as
    /// Connection::exec: connect_failed or timeout when nothing was sent (safe to retry),
    /// unknown_outcome when it was sent and the reply is lost (by deadline, a closed
    /// connection or a move of the primary).
    void exec(std::string encoded, std::size_t count, Clock::time_point deadline, Done done);
    using Calls = std::shared_ptr<const std::vector<OwnedCall>>;
    /// Scripts as one pipeline: `encoded` is their EVALSHAs (encode_calls); a script's first
    /// call on a session goes as EVAL instead, and a call answered NOSCRIPT (a SCRIPT FLUSH)
    /// is sent again with EVAL. Error replies stay in the replies; the Status fails as exec's.
    void eval_many(Calls calls, std::string encoded, Clock::time_point deadline, Done done);
    /// One script, as eval_many.
    void eval(const ScriptCall& call, Clock::time_point deadline,
              std::function<void(Status, Reply)> done);
    const Endpoint& endpoint() const { return ep_; }
    /// From the next request on, talks to host:port (a failover moved the primary).
    void retarget(const std::string& host, std::uint16_t port);
    /// Closes the session for good (the client is closing): what is in flight fails, and so
    /// does every later request. Never throws.
    void close() noexcept;
    /// Closes the session once every request sent or queued is answered or past its deadline
    /// (at once when none is), then calls closed(): a client that closes lets a Redlock
    /// round's stragglers (a release the majority already decided) still reach their nodes.
    /// Never throws.
    void close_when_idle(std::function<void()> closed) noexcept;

  private:
    struct Batch {
        std::string bytes;
        std::size_t count = 0;
        std::vector<Reply> replies;
        Clock::time_point deadline;
        Done done;
    };
    void connect();
    void flush();
    void flush_soon();
    void start_read();
    void on_read(std::size_t n);
    void arm_timer();
    void on_deadline();
    void reset(const Status& why);
    void send_failed(const std::error_code& ec);  // a write failed: reset, outcome unknown
    static void fail(std::deque<Batch>& batches, const Status& why);
    // True once per script and session (then recorded): its call goes whole, as EVAL.
    bool first_on_session(const Script& s);
    void drain_check() noexcept;  // ends a close_when_idle once nothing is left

    std::function<void()> drained_;  // close_when_idle's, while it waits
    // Scripts this session has sent whole, which later calls send as EVALSHA. Were a fresh
    // server's first call an EVALSHA, its NOSCRIPT would cost a second round trip: one a
    // closing client never makes (a cancelled waiter's abandon was lost so), and one that let
    // a Redlock node apply a round after the others had.
    std::vector<const Script*> sent_whole_;

    std::shared_ptr<void> keepalive_;  // the loop's context outlives our socket
    Endpoint ep_;
    Transport transport_;
    asio::steady_timer timer_;  // the next deadline: the oldest sent request's, or any unsent one's
    bool waiting_ = false;      // a wait on timer_ is pending
    unsigned wait_id_ = 0;      // the pending wait's; an older wait's handler ignores itself
    std::deque<Batch> queued_;  // not written yet: safe to retry
    std::deque<Batch> inflight_;
    bool connected_ = false;
    bool closed_ = false;  // close() was called: no session opens again
    bool connecting_ = false;
    bool writing_ = false;
    bool flush_posted_ = false;  // a flush at the end of this turn of the loop is posted
    bool reading_ = false;
    unsigned gen_ = 0;  // session generation: handlers of a closed session ignore themselves
    std::string wbuf_;
    RespReader reader_;
    std::vector<char> rbuf_;
};

}  // namespace deadbolt::detail
