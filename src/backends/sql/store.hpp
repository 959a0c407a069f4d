// SqlStore: the seam's side for databases whose locks belong to a session (PostgreSQL's
// advisory locks, MariaDB's GET_LOCK). A holding is a session that holds the lock's keys;
// when the session ends, the server frees them. The lease's TTL is the session's idle
// timeout: a holder that stops talking for longer (paused, cut off) is ended by the server,
// and its waiters get the lock; a renewal is one statement that proves the session alive
// and sets the timeout again. Waiters wait inside the server (no polling, no herd). Sessions
// are pooled between holdings. A watch on the holdings' idle sockets (session_watch.hpp)
// hears at once when the server ends one (an operator, a cut link, a restart), so its holder
// learns it then and not at its next renewal. The engine's store adds what it sees without
// holding (status, list, fenced data).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backends/sql/dialect.hpp"
#include "backends/sql/holding.hpp"
#include "backends/sql/session.hpp"
#include "backends/sql/session_watch.hpp"
#include "core/client_impl.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class SqlStore : public Store {
  public:
    /// Opens a new session by a deadline.
    using Opener = std::function<Status(Clock::time_point, std::shared_ptr<SqlSession>&)>;
    SqlStore(ClientImpl& c, std::unique_ptr<const SqlDialect> dialect, Opener opener,
             std::shared_ptr<SqlSession> first);
    ~SqlStore() override;
    SqlStore(const SqlStore&) = delete;
    SqlStore& operator=(const SqlStore&) = delete;

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
    Status ping() override;
    void stop() noexcept override;

    // For claims.
    /// A session that holds nothing: a pooled one, or a new one.
    Status borrow(std::shared_ptr<SqlSession>& out);
    /// Takes back a session that holds nothing (closed when it is dead or the pool full).
    void give_back(std::shared_ptr<SqlSession> s) noexcept;
    /// Runs sql on s to leave it holding nothing (keys, a gate, a LISTEN), then takes it
    /// back; when sql fails, or its answer's first value is not expect ("": any answer), closes
    /// it instead, which frees whatever it held.
    void give_back_after(std::shared_ptr<SqlSession> s, const std::string& sql,
                         std::string_view expect) noexcept;
    /// The statement that records names for list (a key cannot be turned back into its
    /// name) that this client has not recorded within kNameTrust of now ("" when none; those
    /// are fresh), marking them seen now; noted(fresh) once it ran, with when it was sent.
    /// trusted_until: when the trust in the others ends (max() when all are fresh). The
    /// engine prunes names nothing holds or waits for that nobody marked seen for kNamesKept
    /// (prune_names): many times kNameTrust, so that a name this client trusts recorded is
    /// never pruned under it.
    std::string naming(std::span<const std::string> names, std::vector<std::string>& fresh,
                       Clock::time_point now, Clock::time_point& trusted_until);
    void noted(const std::vector<std::string>& fresh, Clock::time_point sent);
    /// How long a client trusts its record of a name, and how long an unused name is kept.
    static constexpr std::chrono::seconds kNameTrust{60}, kNamesKept{600};
    /// What the engine does on the session s (m held) right after it granted spec to token
    /// with fence, before the grant is reported: an election's leader publishes its value.
    /// farewell: the statements a release of the holding runs first. Default: nothing.
    virtual Status on_grant(SqlSession& s, const LockSpec& spec, const std::string& token,
                            std::uint64_t fence, std::chrono::milliseconds keep,
                            std::string& farewell);
    /// What to add to a refusal of deadbolt's own statements for want of rights: who may not
    /// do what, and the GRANTs that let it ("" by default).
    virtual std::string rights_advice() const { return {}; }
    /// st, with rights_advice() added when it is a refusal for want of rights.
    Status advised(Status st) const;
    /// Waits inside the server on s (m held) for key until until (its lock timeout; the
    /// client gives up a command timeout later, for a server that does not answer), cut
    /// short when wake_fd is readable: true when it took key. A failed wait that broke the
    /// connection, or was cut short, leaves s closed, and what it held with it.
    bool wait_in_server(SqlSession& s, const std::string& key, bool shared, Clock::time_point until,
                        int wake_fd);
    /// Watches a holding's session from now until it is released or ends: when the server
    /// ends it, every holding is checked at once (on_doubt).
    void watch(const std::shared_ptr<SqlSession>& s);
    /// Runs sql on a pooled session (status, list, fenced data, rows) by by (default: a
    /// command timeout from now); a session whose statement failed is closed, not pooled.
    Status run_once(const std::string& sql, std::vector<SqlRows>& out, Clock::time_point by = {});
    const SqlDialect& dialect() const { return *dialect_; }
    ClientImpl& client() { return client_; }

  protected:
    /// A holder's statement on s that failed: when s's connection went with it (the server
    /// ended the session, or the link broke), every holding is checked now, since s's watch
    /// no longer has its socket: a loss is told at once, not at the next renewal. Call with
    /// s.m held or not; never blocks (the check runs on the renewer's thread). True when s is
    /// gone, and the holding with it.
    bool session_gone(const Status& st, const SqlSession& s) noexcept;
    /// The release of held asked again after one that got no answer, which closed its
    /// session here: yes when that session, in the server, still holds held's first key as
    /// held's grant (the server has not noticed the close: a stalled link); no when it is
    /// gone (whether or not it outlived the release, its holding cannot be shown to have);
    /// unknown when no answer came. Only looks. Default: no.
    virtual Verdict orphan_holds(const SqlHolding& held, Clock::time_point by);
    /// Ends held's orphan session in the server, from another one, when it still holds as
    /// orphan_holds asks: ok also when it is gone already; an error when no answer came.
    /// Default: ok (nothing to end).
    virtual Status end_orphan(const SqlHolding& held, Clock::time_point by);
    /// The answer of a statement on a pooled session (run_once) as a verdict: yes when its
    /// first value is expect, no when it is something else, unknown when no answer came.
    Verdict verdict_by(const std::string& sql, std::string_view expect, Clock::time_point by);

  private:
    // The release of held asked again: seen holding once, the orphan was ours up to the
    // release, so finding it gone later is no loss (an end whose answer was lost, asked
    // again, finds it gone by its own hand).
    Verdict settle_orphan(const SqlHolding& held, Clock::time_point by);

  protected:
    enum class RowOp : unsigned char { extend, release, check };
    /// Extends (by keep), releases or checks a holding kept as a row; the default answers
    /// unknown (an engine without row holdings never makes one).
    virtual Verdict on_row(RowOp op, const SqlRow& row, std::chrono::milliseconds keep,
                           Clock::time_point by);
    /// The statement that records fresh (names this client does not trust recorded, without
    /// repeats) and marks them seen now, ';'-ended.
    virtual std::string record_names(const std::vector<std::string>& fresh) const = 0;
    /// The statement that deletes, a bounded number at a time, the recorded names that
    /// nothing holds or waits for and nobody marked seen for kNamesKept (and whatever else
    /// the engine keeps per name or session that nothing uses any more). It must never leave
    /// a name that a client trusts recorded unrecorded: kNamesKept is far beyond kNameTrust.
    virtual std::string prune_names() const = 0;

  private:
    // Runs prune_names() after a release at most every kNameTrust: a round trip a minute, and
    // one per short-lived client (a CLI run), whatever the rate of releases.
    void maybe_prune() noexcept;

    ClientImpl& client_;
    const std::unique_ptr<const SqlDialect> dialect_;
    const Opener opener_;
    // Two locks, each taken twice per acquire+release by every thread of the process: one
    // would make them queue on each other twice as often.
    std::mutex pool_m_;
    std::vector<std::shared_ptr<SqlSession>> idle_;
    std::mutex names_m_;
    std::unordered_map<std::string, Clock::time_point> named_;  // name: when recorded
    Clock::time_point swept_{};                                 // named_'s last sweep
    Clock::time_point next_prune_{};
    SessionWatch watch_;  // last: stopped before the rest goes
};

}  // namespace deadbolt::detail
