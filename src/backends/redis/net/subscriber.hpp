// Subscriber: the dedicated pub/sub connection that wakes waiters when a lock is released.
//
// Runs on its own thread and io_context. Waiters subscribe to a lock's release channel
// before retrying, then sleep on the channel's sequence number: a message, a reconnect (which
// may have lost messages) or an unsubscription all bump it, so a waiter never sleeps past an
// event it could have missed.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/redis/net/endpoint.hpp"
#include "backends/redis/net/resp.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/net/transport.hpp"

namespace deadbolt::detail {

class Subscriber {
  public:
    using Address = std::pair<std::string, std::uint16_t>;
    /// alternatives (a cluster's nodes, any of which carries every release message): where to
    /// go next when ep cannot be reached; empty: keep trying ep.
    explicit Subscriber(Endpoint ep, std::function<std::vector<Address>()> alternatives = {});
    ~Subscriber();
    Subscriber(const Subscriber&) = delete;
    Subscriber& operator=(const Subscriber&) = delete;

    /// Adds interest in channel and returns once the server confirmed the subscription, with
    /// the channel's current sequence number in *seq. Errors: timeout / connect_failed.
    Status subscribe(const std::string& channel, Clock::time_point deadline, std::uint64_t* seq);
    /// The same for several channels at once, in one round trip: all or none; their sequence
    /// numbers go to seqs, in order.
    Status subscribe_all(const std::vector<std::string>& channels, Clock::time_point deadline,
                         std::vector<std::uint64_t>& seqs);
    /// Drops one interest; the last one unsubscribes.
    void unsubscribe(const std::string& channel);
    /// Sleeps until channel's sequence differs from seq or until deadline; returns the new
    /// sequence (equal to seq on timeout).
    std::uint64_t wait(const std::string& channel, std::uint64_t seq, Clock::time_point deadline);
    /// Sleeps until any channels[i]'s sequence differs from seqs[i] or until deadline;
    /// stores the new sequences in seqs.
    void wait_any(const std::vector<std::string>& channels, std::vector<std::uint64_t>& seqs,
                  Clock::time_point deadline);
    // The same without blocking, for the event loop: start a subscription, then look at it
    // whenever the listener says something changed.

    /// Calls on_change at every change that may concern a waiter (a message, a confirmed
    /// subscription, a lost connection), from the subscriber's thread under its lock: it must
    /// only hand the news on (post it), never call back in. Empty: no listener.
    void listen(std::function<void()> on_change);
    /// Adds interest in channels (as subscribe_all, without waiting for the confirmation).
    void subscribe_start(const std::vector<std::string>& channels);
    /// After subscribe_start: ok with their sequence numbers in seqs once every channel is
    /// confirmed; nullopt while that is pending. failed: the last connection error, if any.
    std::optional<Status> subscribed(const std::vector<std::string>& channels,
                                     std::vector<std::uint64_t>& seqs, Status* failed = nullptr);
    /// True when any channels[i]'s sequence differs from seqs[i] (seqs then take the new
    /// ones); never blocks.
    bool moved(const std::vector<std::string>& channels, std::vector<std::uint64_t>& seqs);

    /// Wakes every waiter of channel now (e.g. on cancellation).
    void poke(const std::string& channel);
    /// Moves to host:port (a failover moved the primary): the session is closed and opened
    /// there, every subscription renewed, and every waiter woken (messages may be lost).
    void retarget(const std::string& host, std::uint16_t port);

  private:
    struct Channel {
        int refs = 0;
        int pending_acks = 0;  // SUBSCRIBE/UNSUBSCRIBE sent and not yet answered
        bool subscribed = false;
        std::uint64_t seq = 0;
    };

    void run();
    void send_locked(std::string bytes);
    void start_write_locked();
    void start_read();
    void on_reply(const Reply& r);
    void on_disconnect();
    void notify_locked();  // waiters and the listener
    // Adds interest in channels and queues the SUBSCRIBEs a session needs now.
    std::vector<Channel*> start_locked(const std::vector<std::string>& channels);

    Endpoint ep_;
    asio::io_context io_;
    Transport transport_;
    RespReader reader_;
    std::vector<char> rbuf_;

    std::mutex m_;
    std::condition_variable cv_;
    std::map<std::string, Channel> channels_;
    bool connected_ = false;
    bool stopping_ = false;
    std::string out_, writing_buf_;
    bool writing_ = false;
    unsigned gen_ = 0;  // session generation; handlers of a closed session ignore themselves
    Status last_error_;
    std::optional<std::pair<std::string, std::uint16_t>> target_;  // retarget() pending
    std::function<std::vector<Address>()> alternatives_;
    std::function<void()> listener_;
    std::thread thread_;
};

}  // namespace deadbolt::detail
