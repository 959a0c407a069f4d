#include "backends/sql/store.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backends/sql/claim.hpp"
#include "backends/sql/holding.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::size_t kPooled = 16;  // idle sessions kept for the next holdings

// A statement's verdict on a holding's session: no when the session is gone (and with it
// the locks), unknown when no answer came.
Verdict verdict_of(const Status& st) {
    if (st.ok()) return Verdict::yes();
    if (st.ec == make_error_code(errc::connection_lost)) return Verdict::no();
    return Verdict::unknown(st);
}

}  // namespace

SqlStore::SqlStore(ClientImpl& c, std::unique_ptr<const SqlDialect> dialect, Opener opener,
                   std::shared_ptr<SqlSession> first)
    : client_(c), dialect_(std::move(dialect)), opener_(std::move(opener)), watch_([this] {
          if (on_doubt) on_doubt();
      }) {
    idle_.push_back(std::move(first));
}

SqlStore::~SqlStore() = default;

void SqlStore::stop() noexcept {
    watch_.stop();
}

void SqlStore::watch(const std::shared_ptr<SqlSession>& s) {
    watch_.watch(s);
}

std::unique_ptr<Claim> SqlStore::open(const LockSpec& spec, std::stop_token cancel) {
    return std::make_unique<SqlClaim>(*this, spec, std::move(cancel));
}

Status SqlStore::borrow(std::shared_ptr<SqlSession>& out) {
    {
        std::lock_guard lock(pool_m_);
        auto now = Clock::now();
        while (!idle_.empty()) {
            auto s = std::move(idle_.back());
            idle_.pop_back();
            // One idle for most of its timeout may be ended by the server as we use it.
            bool fresh = s->idle_timeout.count() == 0 || now - s->last_used < s->idle_timeout / 2;
            if (s->alive() && fresh) {
                out = std::move(s);
                return {};
            }
        }
    }
    return opener_(Clock::now() + client_.options.connect_timeout, out);
}

void SqlStore::give_back(std::shared_ptr<SqlSession> s) noexcept {
    if (!s || !s->alive()) return;
    std::lock_guard lock(pool_m_);
    if (idle_.size() < kPooled) idle_.push_back(std::move(s));
}

void SqlStore::give_back_after(std::shared_ptr<SqlSession> s, const std::string& sql,
                               std::string_view expect) noexcept {
    if (!s) return;
    bool clean = false;
    try {
        std::lock_guard lock(s->m);
        std::vector<SqlRows> out;
        clean =
            s->run(sql, deadline(), out).ok() && (expect.empty() || out.back().at(0, 0) == expect);
        if (!clean) s->close();  // what it held goes with the session
    } catch (...) {              // no memory: s is dropped, and its destructor closes it
    }
    if (clean) give_back(std::move(s));
}

bool SqlStore::wait_in_server(SqlSession& s, const std::string& key, bool shared,
                              Clock::time_point until, int wake_fd) {
    auto timeout = std::chrono::milliseconds(0);  // without end
    auto by = Clock::time_point::max();
    if (until != Clock::time_point::max()) {
        timeout = std::max(std::chrono::milliseconds(1),
                           std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()));
        by = until + client_.options.command_timeout;
    }
    std::vector<SqlRows> out;
    return s.run(dialect_->wait_for(key, shared, timeout), by, out, wake_fd).ok() &&
           dialect_->took(out.back());
}

std::string SqlStore::naming(std::span<const std::string> names, std::vector<std::string>& fresh,
                             Clock::time_point now, Clock::time_point& trusted_until) {
    fresh.clear();
    trusted_until = Clock::time_point::max();
    {
        std::lock_guard lock(names_m_);
        for (const auto& n : names)
            if (auto it = named_.find(n); it == named_.end() || now - it->second >= kNameTrust)
                fresh.push_back(n);
            else
                trusted_until = std::min(trusted_until, it->second + kNameTrust);
    }
    if (fresh.empty()) return {};
    std::sort(fresh.begin(), fresh.end());
    fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
    return record_names(fresh);
}

void SqlStore::noted(const std::vector<std::string>& fresh, Clock::time_point sent) {
    std::lock_guard lock(names_m_);
    // A record is trusted from when it was sent: the server marked it seen after that.
    for (const auto& n : fresh)
        if (auto [it, made] = named_.try_emplace(n, sent); !made && it->second < sent)
            it->second = sent;
    // Records past their trust are forgotten now and then: a client that locks a million
    // names once each keeps none of them.
    if (sent - swept_ >= kNameTrust) {
        swept_ = sent;
        std::erase_if(named_, [&](const auto& e) { return sent - e.second >= kNameTrust; });
    }
}

void SqlStore::maybe_prune() noexcept {
    try {
        {
            std::lock_guard lock(names_m_);
            auto now = Clock::now();
            if (now < next_prune_) return;
            next_prune_ = now + kNameTrust;
        }
        // Pruning is housekeeping: a failure leaves names for the next one, and nothing else.
        std::vector<SqlRows> out;
        (void)run_once(prune_names(), out);
    } catch (...) {  // no memory: the next release prunes
    }
}

bool SqlStore::session_gone(const Status& st, const SqlSession& s) noexcept {
    if (st.ok() || s.alive()) return false;
    if (on_doubt) on_doubt();
    return true;
}

std::vector<Verdict> SqlStore::extend(std::span<const Renewal> rs, Clock::time_point by) {
    std::vector<Verdict> out;
    out.reserve(rs.size());
    for (const auto& r : rs) {
        if (const auto* row = dynamic_cast<const SqlRow*>(r.holding)) {
            out.push_back(on_row(RowOp::extend, *row, r.keep, by));
            continue;
        }
        const auto* held = dynamic_cast<const SqlHolding*>(r.holding);
        auto s = held ? held->session() : nullptr;
        if (!s) {
            out.push_back(Verdict::no());
            continue;
        }
        std::lock_guard lock(s->m);
        // The statement proves the session alive, and its idle timeout runs from here.
        std::vector<SqlRows> rows;
        auto st = s->run(dialect_->keep(r.keep), by, rows);
        if (st.ok()) s->idle_timeout = r.keep;
        // A session whose connection is gone took the holding with it, whatever became of the
        // statement (a termination racing it reads as unknown_outcome): lost.
        out.push_back(session_gone(st, *s) ? Verdict::no() : verdict_of(st));
    }
    return out;
}

std::vector<Verdict> SqlStore::release(std::span<const Holding* const> hs, Clock::time_point by) {
    std::vector<Verdict> out;
    out.reserve(hs.size());
    for (const auto* h : hs) {
        if (const auto* row = dynamic_cast<const SqlRow*>(h)) {
            out.push_back(on_row(RowOp::release, *row, {}, by));
            continue;
        }
        const auto* held = dynamic_cast<const SqlHolding*>(h);
        auto s = held ? held->take() : nullptr;
        if (s) SessionWatch::unwatch(*s);
        // Asked again after a release that got no answer: that session is closed here, but
        // the server may not know yet, and only another session can end it now.
        if (held && !s && held->orphan() != 0) {
            out.push_back(settle_orphan(*held, by));
            continue;
        }
        if (!held || !s || !s->alive()) {
            out.push_back(Verdict::no());  // its session ended, and the server freed its keys
            continue;
        }
        std::unique_lock lock(s->m);
        auto& rows = s->answers;
        std::string_view bye = held->give_back();
        std::string with_farewell;
        if (!held->farewell.empty()) bye = with_farewell = held->farewell + held->give_back();
        auto st = s->run(bye, by, rows);
        auto v = verdict_of(st);
        if (st.ok() && rows.back().at(0, 0) != std::to_string(held->keys().size()))
            v = Verdict::no();
        if (v.is == Verdict::Is::unknown) held->orphaned(s->id);
        if (v.is != Verdict::Is::yes) s->close();  // whatever it held goes with the session
        lock.unlock();
        if (v.is == Verdict::Is::yes) give_back(std::move(s));
        out.push_back(std::move(v));
    }
    // After a release the server answered, not into one that is down.
    if (std::ranges::any_of(out, [](const Verdict& v) { return v.is == Verdict::Is::yes; }))
        maybe_prune();
    return out;
}

std::vector<Verdict> SqlStore::check(std::span<const Holding* const> hs, Clock::time_point by) {
    std::vector<Verdict> out;
    out.reserve(hs.size());
    for (const auto* h : hs) {
        if (const auto* row = dynamic_cast<const SqlRow*>(h)) {
            out.push_back(on_row(RowOp::check, *row, {}, by));
            continue;
        }
        const auto* held = dynamic_cast<const SqlHolding*>(h);
        auto s = held ? held->session() : nullptr;
        if (!held || !s || !s->alive()) {
            out.push_back(Verdict::no());
            continue;
        }
        std::lock_guard lock(s->m);
        std::vector<SqlRows> rows;
        auto st = s->run(dialect_->count_held(held->keys()), by, rows);
        auto v = session_gone(st, *s) ? Verdict::no() : verdict_of(st);
        if (st.ok() && rows.back().at(0, 0) != std::to_string(held->keys().size()))
            v = Verdict::no();
        out.push_back(std::move(v));
    }
    return out;
}

Status SqlStore::on_grant(SqlSession& /*s*/, const LockSpec& /*spec*/, const std::string& /*token*/,
                          std::uint64_t /*fence*/, std::chrono::milliseconds /*keep*/,
                          std::string& farewell) {
    farewell.clear();
    return {};
}

Status SqlStore::advised(Status st) const {
    if (st.ec != make_error_code(errc::permission_denied)) return st;
    auto advice = rights_advice();
    if (advice.empty()) return st;
    return Status::error(errc::permission_denied, st.detail + ". " + advice);
}

Verdict SqlStore::settle_orphan(const SqlHolding& held, Clock::time_point by) {
    // Looked at every time, so that an end never reaches a session that is not the orphan
    // (an id the server gave again after a restart).
    auto found = orphan_holds(held, by);
    if (found.is == Verdict::Is::no && held.orphan_was_holding()) return Verdict::yes();
    if (found.is != Verdict::Is::yes) return found;
    held.orphan_seen_holding();
    auto st = end_orphan(held, by);
    return st.ok() ? Verdict::yes() : Verdict::unknown(st);
}

Verdict SqlStore::orphan_holds(const SqlHolding& /*held*/, Clock::time_point /*by*/) {
    return Verdict::no();
}

Status SqlStore::end_orphan(const SqlHolding& /*held*/, Clock::time_point /*by*/) {
    return {};
}

Verdict SqlStore::verdict_by(const std::string& sql, std::string_view expect,
                             Clock::time_point by) {
    std::vector<SqlRows> out;
    // A failure here is this statement's (its own session), not the holding's: ask again.
    if (auto st = run_once(sql, out, by); !st.ok()) return Verdict::unknown(st);
    return out.back().at(0, 0) == expect ? Verdict::yes() : Verdict::no();
}

Verdict SqlStore::on_row(RowOp /*op*/, const SqlRow& /*row*/, std::chrono::milliseconds /*keep*/,
                         Clock::time_point /*by*/) {
    return Verdict::unknown(
        Status::error(errc::invalid_argument, "this engine keeps no holding as a row"));
}

Status SqlStore::run_once(const std::string& sql, std::vector<SqlRows>& out, Clock::time_point by) {
    std::shared_ptr<SqlSession> s;
    if (auto st = borrow(s); !st.ok()) return st;
    Status st;
    {
        std::lock_guard lock(s->m);
        st = s->run(sql, by == Clock::time_point{} ? deadline() : by, out);
        // A statement that failed part way may leave state on the session (a transaction a
        // later statement never committed): it goes, rather than back to the pool.
        if (!st.ok()) s->close();
    }
    give_back(std::move(s));
    return st;
}

Status SqlStore::ping() {
    std::vector<SqlRows> out;
    return run_once("SELECT 1", out);
}

}  // namespace deadbolt::detail
