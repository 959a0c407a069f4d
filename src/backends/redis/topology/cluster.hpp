// Cluster: a Redis Cluster as one Server. Each request goes to the master of its keys' slot
// (a lock's keys all share one slot: keys.hpp). MOVED updates the map and is followed; ASK
// is followed once, with ASKING; TRYAGAIN and CLUSTERDOWN (which ran nothing) are sent again
// shortly; a master that cannot be reached makes the client re-read the map, since a
// failover may have moved its slots. All of it within the call's deadline.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "backends/redis/topology/server.hpp"
#include "backends/redis/topology/slots.hpp"
#include "core/background.hpp"

namespace deadbolt::detail {

class Cluster final : public Server, public std::enable_shared_from_this<Cluster> {
  public:
    /// seeds: where to ask for the slot map first; seeds[0]'s options apply to every node.
    explicit Cluster(std::vector<Endpoint> seeds);
    ~Cluster() override;
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    /// Reads the slot map (CLUSTER SLOTS) from the first node that answers: the masters of
    /// the last map, then the seeds. Errors: the last node's error, naming every node
    /// tried; invalid_url when a node is not in cluster mode.
    Status refresh(Clock::time_point deadline);
    /// Re-reads the map every period on a thread of its own, so a failover is noticed
    /// without traffic; on_change runs there after any read that moved a slot's master.
    /// The thread keeps this Cluster alive until stop().
    void watch(std::chrono::milliseconds period, std::function<void()> on_change);
    /// Ends the watch: joins the thread, or detaches it when called from on_change (the
    /// client died there). Never throws.
    void stop() noexcept;
    /// Every node of the last map, masters first.
    std::vector<NodeAddress> nodes() const;
    /// The master serving key's slot in the last map (empty host when none does).
    NodeAddress master_of(std::string_view key) const;
    /// The master serving slot in the last map (empty host when none does).
    NodeAddress owner_of(std::uint16_t slot) const;
    /// A MOVED reply said slot is served at to now.
    void moved(std::uint16_t slot, const NodeAddress& to);
    /// Asks the watch to re-read the map now instead of at its next period (a slot moved or a
    /// master stopped answering); never blocks, so the event loop may call it.
    void reread_soon() noexcept;
    /// The endpoint every node's connection copies (the URL's options).
    const Endpoint& base() const { return base_; }

    Status eval_many(std::span<const ScriptCall> calls, std::vector<Reply>& replies,
                     Clock::time_point deadline) override;
    Status pipeline(std::string_view key, const std::vector<std::vector<std::string_view>>& cmds,
                    std::vector<Reply>& replies, Clock::time_point deadline) override;
    Status confirm_replicated(std::span<const ScriptCall> calls,
                              Clock::time_point deadline) override;
    Status ping(Clock::time_point deadline) override;
    std::vector<std::shared_ptr<Connection>> primaries() override;

  private:
    struct Request;  // one call or pipeline bound for one slot
    using ConnPtr = std::shared_ptr<Connection>;

    void route(std::vector<Request>& requests, Clock::time_point deadline);
    ConnPtr connection_locked(const NodeAddress& a);
    ConnPtr owner(std::uint16_t slot);
    Status read_map(Connection& c, Clock::time_point deadline);
    void watch_loop(std::chrono::milliseconds period);

    Endpoint base_;
    std::vector<NodeAddress> seeds_;

    mutable std::mutex m_;
    std::map<NodeAddress, ConnPtr> conns_;  // every node we talked to, by address
    std::vector<NodeAddress> owners_;       // slot -> master (empty host: not served)
    std::vector<SlotRange> ranges_;         // the last map read
    std::uint64_t epoch_ = 0;               // bumped by every map read
    bool changed_ = false;                  // a slot's master moved since on_change last ran
    bool reread_ = false;                   // reread_soon() was called since the last read

    std::mutex refresh_m_;  // one map read at a time
    std::condition_variable cv_;
    bool stopping_ = false;
    std::function<void()> on_change_;
    Background watcher_;
};

}  // namespace deadbolt::detail
