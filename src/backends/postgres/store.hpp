// PgStore: the seam's PostgreSQL side (DESIGN section 12), on session advisory locks. A
// holding is a session that holds the lock's key (pg_advisory_lock): a session ends with its
// connection, and the server then frees what it held. The lease's TTL is the session's
// idle_session_timeout: a holder that stops talking for longer (paused, cut off) is ended by
// the server, and its waiters get the lock; a renewal is one statement that proves the
// session alive and sets the timeout again. Waiters wait inside the server, in its FIFO lock
// queue (no polling, no herd); the fence is a sequence's next value, drawn in the grant's
// round trip. Connections are pooled between holdings.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/postgres/conn.hpp"
#include "backends/postgres/url.hpp"
#include "core/client_impl.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class PgStore final : public Store {
  public:
    PgStore(ClientImpl& c, PgUrl url, std::shared_ptr<PgConn> first);
    ~PgStore() override;

    Status supports(const LockSpec& spec) const override;
    std::unique_ptr<Claim> open(const LockSpec& spec, std::stop_token cancel) override;
    std::vector<Verdict> extend(std::span<const Renewal> rs, Clock::time_point by) override;
    std::vector<Verdict> release(std::span<const Holding* const> hs, Clock::time_point by) override;
    std::vector<Verdict> check(std::span<const Holding* const> hs, Clock::time_point by) override;
    Clock::time_point deadline() const override {
        return Clock::now() + client_.options.command_timeout;
    }
    Clock::time_point deadline_for(std::chrono::milliseconds /*ttl*/) const override {
        return deadline();
    }
    bool late_yes_is_lost() const override { return false; }

    Status offers(std::string_view primitive) const override;
    Status statuses(const std::vector<std::string>& names,
                    std::vector<std::pair<LockStatus, Status>>& out) override;
    Status lock_names(std::string_view pattern, std::vector<std::string>& names) override;
    Status force_unlock(const std::string& name, std::string& kind) override;
    Status fenced_get(std::string_view key, FencedValue& out) override;
    Status fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                        std::string_view version, FencedResult& out) override;
    Status ping() override;

    // For claims.
    /// A session that holds nothing: a pooled one, or a new one.
    Status borrow(std::shared_ptr<PgConn>& out);
    /// Takes back a session that holds nothing (closed when it is dead or the pool full).
    void give_back(std::shared_ptr<PgConn> c) noexcept;
    /// The statement that records names for status and list the first time this client uses
    /// them ("" after); noted() once it ran.
    std::string naming(const std::vector<std::string>& names);
    void noted(const std::vector<std::string>& names);
    const std::string& schema() const { return url_.schema; }
    ClientImpl& client() { return client_; }

  private:
    // Runs sql on a pooled session for a one-off statement (status, list, fenced data).
    Status run_once(const std::string& sql, std::vector<PgRows>& out);

    ClientImpl& client_;
    const PgUrl url_;
    std::mutex m_;
    std::vector<std::shared_ptr<PgConn>> idle_;
    std::set<std::string> named_;
};

}  // namespace deadbolt::detail
