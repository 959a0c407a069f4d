#include "backends/postgres/claim.hpp"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backends/postgres/keys.hpp"

namespace deadbolt::detail {
namespace {

// The try of the keys not held yet: how many of them (from the first) it took.
std::string try_sql(const std::string& schema, std::span<const std::int64_t> keys, bool shared) {
    if (keys.empty()) return "0";
    if (keys.size() == 1)
        return fmt::format("CASE WHEN pg_try_advisory_lock{}({}) THEN 1 ELSE 0 END",
                           shared ? "_shared" : "", keys[0]);
    return fmt::format("{}.try_locks({}, {})", schema, keys_literal({keys.begin(), keys.end()}),
                       shared);
}

}  // namespace

PgClaim::PgClaim(PgStore& store, const LockSpec& spec, std::stop_token cancel)
    : store_(store), spec_(spec), cancel_(std::move(cancel)) {
    names_ = spec.shape == Shape::multi ? spec.names : std::vector{spec.name};
    keys_ = sorted_keys(names_);
    shared_ = spec.shape == Shape::read;
    // Threads of this process line up here first (one session per lock waits in the
    // server); readers share, and a MultiLock's names are many.
    if (spec.shape != Shape::read && spec.shape != Shape::multi)
        traits_.local_line = "pg:" + std::to_string(keys_.front());
    traits_.expiry_wakes = true;  // the server hands the lock to a waiter when a holder's
                                  // session ends
    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ >= 0)
        on_cancel_.emplace(cancel_, [fd = wake_fd_] {
            std::uint64_t one = 1;
            [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
        });
}

PgClaim::~PgClaim() {
    on_cancel_.reset();
    drop_session();
    if (wake_fd_ >= 0) ::close(wake_fd_);
}

void PgClaim::drop_session() noexcept {
    if (!conn_) return;
    if (held_ == 0)
        store_.give_back(std::move(conn_));
    else
        conn_->close();  // the server frees what it held
    conn_.reset();
    held_ = 0;
}

void PgClaim::hand_over(const std::string& token) {
    places_[token] = std::make_shared<PgHolding>(std::move(conn_), keys_, shared_);
    conn_.reset();
    held_ = 0;
}

void PgClaim::attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                      Fences& f) {
    if (conn_ && !conn_->alive()) conn_.reset(), held_ = 0;  // its session ended: held nothing
    if (!conn_ && (a.status = store_.borrow(conn_), !a.status.ok())) return;
    auto c = conn_;
    std::lock_guard lock(c->m);
    const auto& s = store_.schema();
    // The idle timeout is the lease's TTL: set before the try, so that a grant is never
    // held by a session without one.
    std::string sql;
    if (c->idle_timeout != keep) sql += fmt::format("SET idle_session_timeout = {};", keep.count());
    sql += store_.naming(names_);
    std::span<const std::int64_t> rest(keys_.begin() + static_cast<std::ptrdiff_t>(held_),
                                       keys_.end());
    sql += fmt::format(
        "WITH t AS MATERIALIZED (SELECT {} AS n) SELECT n, CASE WHEN n = {} THEN {} END FROM t",
        try_sql(s, rest, shared_), rest.size(),
        shared_ ? std::string("0") : fmt::format("nextval('{}.fences')", s));
    std::vector<PgRows> out;
    a.status = c->run(sql, store_.deadline(), out);
    if (!a.status.ok()) {
        // A statement that failed part way may have taken a key before it failed: the session
        // goes, and what it took with it. The cleanup of an unknown outcome finds it gone.
        c->close();
        hand_over(token);
        return;
    }
    c->idle_timeout = keep;
    store_.noted(names_);
    const auto& row = out.back();
    held_ += static_cast<std::size_t>(std::stoll(row.at(0, 0)));
    if (held_ < keys_.size()) {
        a.pttl = std::chrono::milliseconds(-1);  // the server wakes us; no expiry to wait for
        return;
    }
    a.acquired = true;
    f.fence = shared_ ? 0 : std::stoull(row.at(0, 1));
    if (spec_.shape == Shape::multi) f.each.assign(spec_.names.size(), f.fence);
    hand_over(token);
}

void PgClaim::wait(Clock::time_point until) {
    if (!conn_ || held_ == keys_.size() || cancel_.stop_requested()) return;
    auto c = conn_;
    std::lock_guard lock(c->m);
    auto now = Clock::now();
    if (until <= now) return;
    // lock_timeout ends the wait in the server at until; the client's own deadline is a
    // command timeout later, for a server that does not answer at all.
    long long ms = 0;
    auto by = Clock::time_point::max();
    if (until != Clock::time_point::max()) {
        ms = std::max<long long>(1,
                                 std::chrono::ceil<std::chrono::milliseconds>(until - now).count());
        by = until + store_.client().options.command_timeout;
    }
    auto sql = fmt::format("SET lock_timeout = {}; SELECT pg_advisory_lock{}({})", ms,
                           shared_ ? "_shared" : "", keys_[held_]);
    std::vector<PgRows> out;
    if (c->run(sql, by, out, wake_fd_).ok())
        ++held_;  // the next attempt takes the rest, or reports the grant
    else if (!c->alive())
        conn_.reset(), held_ = 0;  // cancelled or cut off: the session went, with its keys
}

std::shared_ptr<Holding> PgClaim::holding(const std::string& token,
                                          std::chrono::milliseconds /*keep*/) const {
    if (auto it = places_.find(token); it != places_.end()) return it->second;
    return std::make_shared<PgHolding>(nullptr, keys_, shared_);
}

std::shared_ptr<Holding> PgClaim::waiter(const std::string& token,
                                         std::chrono::milliseconds keep) const {
    return holding(token, keep);
}

}  // namespace deadbolt::detail
