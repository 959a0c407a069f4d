// Connection: one pipelined command connection shared by many threads.
//
// No I/O thread: the calling threads drive the socket. One caller at a time is the leader; it
// writes every queued request in one write, reads replies and hands each to its caller. The
// others queue their bytes, wake the leader and wait. A lone caller therefore pays exactly one
// round trip (no thread hop), and concurrent callers share writes and reads (pipelining).
// On a plain socket the leader writes at once and waits for the reply in a blocking read, as a
// blocking client does: two system calls per request, where a poll and a read took three and
// the io_context's reactor five (it stays for TLS, connecting, and writes that do not fit, and
// the socket is made non-blocking again for it). While it so waits, other callers write their
// requests themselves (non-blocking sends), so the leader wakes for replies only.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/redis/net/endpoint.hpp"
#include "backends/redis/net/resp.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/net/transport.hpp"
#include "core/read_bound.hpp"

namespace deadbolt::detail {

class Connection {
  public:
    explicit Connection(Endpoint ep);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    /// Sends `count` encoded commands as one pipeline and returns their replies in order.
    /// Errors: connect_failed / timeout / connection_lost when nothing was sent (safe to
    /// retry); unknown_outcome when the request was sent but its reply was lost.
    Status exec(std::string encoded, std::size_t count, std::vector<Reply>& replies,
                Clock::time_point deadline);

    struct Batch;
    using Pending = std::shared_ptr<Batch>;
    /// The first half of exec: queues the request and, when a session is open and no other
    /// thread drives it, writes it now without waiting for the reply. One thread can so
    /// send to several servers and then wait for each (one round trip for all, no threads).
    Pending submit(std::string encoded, std::size_t count);
    /// The second half: waits for p's replies, as exec.
    Status wait(const Pending& p, std::vector<Reply>& replies, Clock::time_point deadline);

    const Endpoint& endpoint() const { return ep_; }
    /// True while a caller is being served (requests queued, in flight, or a leader).
    bool busy();

    /// From the next request on, talks to host:port instead (a failover moved the primary);
    /// a session open now is closed first, and requests in flight on it fail (unknown_outcome).
    void retarget(const std::string& host, std::uint16_t port);

  private:
    using BatchPtr = std::shared_ptr<Batch>;
    BatchPtr enqueue_locked(std::string encoded, std::size_t count);
    void hand_off_locked(const Batch* skip = nullptr);

    void lead(const BatchPtr& mine, Clock::time_point deadline);
    Status connect(Clock::time_point deadline);
    void flush_locked(bool by_leader);  // a caller that is not the leader leaves a failure to it
    void start_write();
    void send_failed(const std::error_code& ec);
    void start_read();
    void on_read(std::size_t n);
    // The leader's wait for a reply on a plain socket (fd), blocking, until a reply or the
    // receive timeout (bound_, short of the deadline): true when mine is done (the leader's
    // turn is over).
    bool read_direct(int fd, const Batch& mine);
    // The plain socket blocks (on) or not; the reactor must never meet a blocking one. False
    // when it cannot be so (no plain socket, or the kernel refused).
    bool set_blocking_locked(bool on) noexcept;
    bool consume_locked(std::size_t n);  // parses n bytes of rbuf_; false when it reset
    void wake_locked();
    void reset(const Status& why);  // leader only: closes, fails in-flight batches
    // Before a request goes out on a session idle for a while: when the server hung up
    // meanwhile (a restart), closes it, so that the request goes to a new session rather than
    // into a dead one and an unknown outcome. True when it closed it.
    bool drop_if_hung_up_locked();
    void complete_locked(Batch& b);

    Endpoint ep_;
    asio::io_context io_;
    Transport transport_;

    std::mutex m_;
    std::deque<BatchPtr> queued_;    // not yet handed to a write: safe to retry
    std::deque<BatchPtr> inflight_;  // written (or being written), awaiting replies in order
    bool leader_ = false;
    bool wake_posted_ = false;
    bool polling_ = false;     // the leader waits in read_direct: others write for themselves
    bool in_reactor_ = false;  // the leader waits in io_: wake it with a post
    std::optional<std::error_code> send_error_;  // a write by a caller that was not the leader
    std::optional<std::pair<std::string, std::uint16_t>> target_;  // retarget() pending

    // Leader-only state: touched only by the thread that is leader (handoff under m_), except
    // that while it polls (polling_) another caller may write its request under m_
    // (flush_locked: connected_, writing_, gen_, wbuf_).
    bool connected_ = false;
    bool writing_ = false;
    bool reading_ = false;
    bool blocking_ = false;  // the socket blocks: only the leader's direct reads use it so
    ReadBound bound_;        // the socket's receive timeout, a direct read's bound
    unsigned gen_ = 0;       // session generation; handlers of a closed session ignore themselves
    unsigned connect_failures_ = 0;
    Clock::time_point idle_since_{};  // when the last reply came in (or the session opened)
    std::string wbuf_;
    RespReader reader_;
    std::vector<char> rbuf_;
};

}  // namespace deadbolt::detail
