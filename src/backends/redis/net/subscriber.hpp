// Subscriber: the dedicated pub/sub connection that wakes waiters and tells holders of trouble.
//
// Runs on its own thread and io_context. Waiters sleep on a channel's sequence number: a
// message, a reconnect (which may have lost messages) or an unsubscription all bump it, so a
// waiter never sleeps past an event it could have missed.
//
// A client's own channels (Hooks) are subscribed for as long as the subscriber lives:
//  * its inbox, where a release tells the one waiter it wakes (DESIGN section 7): "go <box>",
//    "next <box>" (stand by: look after a while unless "go" or "taken <box>" comes first),
//    where <box> names the lock. A waiter listens on mailbox(box), which needs no server
//    subscription of its own, so a wait costs no SUBSCRIBE once the inbox is up;
//  * the prefix's notices, where force-unlock names what it freed;
//  * when the server has keyspace events on, the keyspace channel of each watched key.
#pragma once

#include <asio/steady_timer.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "backends/redis/net/endpoint.hpp"
#include "backends/redis/net/resp.hpp"
#include "backends/redis/net/status.hpp"
#include "backends/redis/net/transport.hpp"

namespace deadbolt::detail {

/// What a client's subscriber listens for beyond its waiters' channels. The callbacks run
/// on the subscriber's thread, outside its lock: they must only hand the news on.
struct SubscriberHooks {
    std::string inbox;      ///< wake-ups addressed to this client; empty = none
    std::string notices;    ///< names force-unlock freed; empty = none
    bool keyspace = false;  ///< read notify-keyspace-events at connect; watch keys if on
    std::function<void(std::string_view name)> freed;    ///< a notice named name
    std::function<void(std::string_view key)> key_gone;  ///< a watched key went away
    std::function<void()> reconnected;                   ///< a session opened after one was lost
};

class Subscriber {
  public:
    using Address = std::pair<std::string, std::uint16_t>;

    using Hooks = SubscriberHooks;

    /// alternatives (a cluster's nodes, any of which carries every release message): where to
    /// go next when ep cannot be reached; empty: keep trying ep.
    explicit Subscriber(Endpoint ep, std::function<std::vector<Address>()> alternatives = {},
                        Hooks hooks = {});
    ~Subscriber();
    Subscriber(const Subscriber&) = delete;
    Subscriber& operator=(const Subscriber&) = delete;

    /// The channel name under which a waiter hears the inbox's wake-ups for box: it takes part
    /// in subscribe_all, wait_any and the rest like a channel, but is never sent to the server.
    static std::string mailbox(std::string_view box);
    /// True for a name mailbox() made.
    static bool is_mailbox(std::string_view name);

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
    /// How long a mailbox's waiters stand by after "next" before they look by themselves (the
    /// woken waiter ahead may never come); 0 = they do not. Needs an interest in it.
    void standby(const std::string& mailbox, std::chrono::milliseconds after);
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

    /// Keyspace events: adds interest in key's deletion, expiry or eviction (Hooks::key_gone).
    /// False, and nothing to undo, when the server is known to have them off (or Hooks has
    /// keyspace off): then it costs one atomic load.
    bool watch_key(std::string_view key);
    /// Drops an interest watch_key counted.
    void unwatch_key(const std::string& key);

    /// Wakes every waiter of channel now (e.g. on cancellation).
    void poke(const std::string& channel);
    /// Moves to host:port (a failover moved the primary): the session is closed and opened
    /// there, every subscription renewed, and every waiter woken (messages may be lost).
    void retarget(const std::string& host, std::uint16_t port);

  private:
    enum class Kind : unsigned char { server, mailbox, keyspace };
    struct Channel {
        Kind kind = Kind::server;
        int refs = 0;
        int pending_acks = 0;  // SUBSCRIBE/UNSUBSCRIBE sent and not yet answered
        bool subscribed = false;
        std::uint64_t seq = 0;
        std::chrono::milliseconds standby{0};  // a mailbox's: see standby()
    };
    // What the server will answer next, in order: pub/sub replies name their channel, but an
    // error reply does not, so each one is matched to the command it answers.
    struct Sent {
        enum class What : unsigned char { config, subscribe, unsubscribe } what;
        std::vector<std::string> channels;  // still to be confirmed
    };
    // Callbacks to run once the lock is dropped.
    struct Tell {
        std::vector<std::string> freed, gone;
        bool reconnected = false;
    };
    enum class Keyspace : unsigned char { unknown, off, on };

    void run();
    void start_write_locked();
    void post_write_locked();
    void start_read();
    void on_reply(const Reply& r);
    void on_reply_locked(const Reply& r, Tell& tell);
    void on_message_locked(const std::string& channel, const std::string& payload, Tell& tell);
    void on_inbox_locked(std::string_view payload);
    void on_error_locked(const Reply& r);
    void on_config_locked(const Reply& r);
    void subscribe_locked(std::vector<std::string> names);
    void told(Tell& tell);
    void on_disconnect();
    void notify_locked();  // waiters and the listener
    void arm_standby(const std::string& mailbox, std::chrono::milliseconds after);
    void cancel_standby(const std::string& mailbox);
    std::string keyspace_channel(std::string_view key) const;
    // Adds interest in channels and queues the SUBSCRIBEs a session needs now.
    std::vector<Channel*> start_locked(const std::vector<std::string>& channels);
    Channel& entry_locked(const std::string& name);

    Endpoint ep_;
    Hooks hooks_;
    asio::io_context io_;
    Transport transport_;
    RespReader reader_;
    std::vector<char> rbuf_;

    std::mutex m_;
    std::condition_variable cv_;
    std::map<std::string, Channel> channels_;
    std::deque<Sent> sent_;
    bool connected_ = false;
    bool stopping_ = false;
    unsigned sessions_ = 0;  // sessions opened so far: a second one is a reconnect
    std::atomic<Keyspace> keyspace_{Keyspace::unknown};
    bool config_refused_ = false;  // CONFIG GET was refused (an ACL): not asked again
    std::string out_, writing_buf_;
    bool writing_ = false;
    unsigned gen_ = 0;  // session generation; handlers of a closed session ignore themselves
    Status last_error_;
    std::optional<std::pair<std::string, std::uint16_t>> target_;  // retarget() pending
    std::function<std::vector<Address>()> alternatives_;
    std::function<void()> listener_;
    // A mailbox's standby timer, by mailbox; touched on the subscriber's thread only.
    std::map<std::string, std::unique_ptr<asio::steady_timer>> standby_;
    std::thread thread_;
};

}  // namespace deadbolt::detail
