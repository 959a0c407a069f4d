#include "backends/sql/claim.hpp"

#include <cstdint>
#include <utility>

namespace deadbolt::detail {

SqlClaim::SqlClaim(SqlStore& store, const LockSpec& spec, std::stop_token cancel)
    : store_(store), spec_(spec), cancel_(std::move(cancel)), wake_(cancel_) {
    names_ = spec_.shape == Shape::multi ? std::span<const std::string>(spec_.names)
                                         : std::span<const std::string>(&spec_.name, 1);
    shared_ = spec.shape == Shape::read;
    auto keys = store.dialect().keys(names_);
    auto bye = store.dialect().give_back(keys, shared_);
    keys_ = std::make_shared<const SqlKeys>(SqlKeys{std::move(keys), std::move(bye)});
    // Threads of this process line up here first (one session per lock waits in the
    // server); readers share, and a MultiLock's names are many.
    if (spec.shape != Shape::read && spec.shape != Shape::multi)
        traits_.local_line = std::make_shared<const std::string>("sql:" + keys_->keys.front());
    traits_.expiry_wakes = true;  // the server hands a lock on when its holder's session ends
}

SqlClaim::~SqlClaim() {
    drop_session();
}

bool SqlClaim::recycle() noexcept {
    drop_session();
    places_.clear();
    wake_.reset({});
    return true;
}

void SqlClaim::reopen(const std::stop_token& cancel) {
    cancel_ = cancel;
    wake_.reset(cancel);
}

void SqlClaim::drop_session() noexcept {
    if (!session_) return;
    auto s = std::move(session_);
    session_.reset();
    auto held = std::exchange(held_, 0);
    if (held == 0) {
        store_.give_back(std::move(s));
        return;
    }
    // A waiter that gives up with part of a MultiLock (or a grant it never reported) gives
    // those keys back now: closing the session frees them too, but only once the server
    // notices, and the caller may look at them at once.
    try {
        std::vector<std::string> taken(keys_->keys.begin(),
                                       keys_->keys.begin() + static_cast<std::ptrdiff_t>(held));
        store_.give_back_after(std::move(s), store_.dialect().give_back(taken, shared_),
                               std::to_string(held));
    } catch (...) {  // no memory: s is dropped, and closing it frees the keys
    }
}

void SqlClaim::hand_over(const std::string& token, std::string farewell, SqlGrant g) {
    auto h =
        std::make_shared<SqlHolding>(std::move(session_), keys_, shared_, std::move(farewell), g);
    places_.put(token, std::move(h));
    session_.reset();
    held_ = 0;
}

void SqlClaim::attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                       Fences& f) {
    if (session_ && !session_->alive()) session_.reset(), held_ = 0;  // ended: held nothing
    // Pooled sessions keep the last idle timeout set (clearing it would cost a statement per
    // release): one idle for most of it is not borrowed again (SqlStore::borrow).
    if (!session_ && (a.status = store_.borrow(session_), !a.status.ok())) return;
    auto s = session_;
    std::lock_guard lock(s->m);
    const auto& d = store_.dialect();
    // The idle timeout is the lease's TTL: set before the try, so that a grant is never
    // held by a session without one.
    std::string sql = s->idle_timeout != keep ? d.keep(keep) : std::string();
    // Read before the statement is built: a record is trusted from when it was sent, and from
    // a moment earlier is as safe.
    auto sent = Clock::now();
    std::vector<std::string> fresh;
    auto trusted_until = names_trusted_until_;
    if (sent >= names_trusted_until_) sql += store_.naming(names_, fresh, sent, trusted_until);
    // The try is the same statement from one acquisition to the next (the claim is kept).
    if (try_from_ != held_ || try_ttl_ != keep) {
        try_sql_ = d.try_take(keys_->keys, held_, shared_, !shared_, keep);
        try_from_ = held_;
        try_ttl_ = keep;
    }
    if (!sql.empty()) sql += try_sql_;
    auto& out = s->answers;
    a.status = store_.advised(
        s->run(sql.empty() ? std::string_view(try_sql_) : sql, store_.deadline(), out));
    if (!a.status.ok()) {
        // A statement that failed part way may have taken a key before it failed: the session
        // goes, and what it took with it. The cleanup of an unknown outcome finds it gone.
        s->close();
        hand_over(token);
        return;
    }
    s->idle_timeout = keep;
    if (!fresh.empty()) {
        store_.noted(fresh, sent);
        trusted_until = std::min(trusted_until, sent + SqlStore::kNameTrust);
    }
    names_trusted_until_ = trusted_until;
    const auto& row = out.back();
    auto tried = keys_->keys.size() - held_;
    if (row.null(0, 0)) {
        held_ += tried > 1 ? static_cast<std::size_t>(std::stoll(row.at(0, 1))) : 0;
        a.pttl = std::chrono::milliseconds(-1);  // the server wakes us; no expiry to wait for
        return;
    }
    f.fence = shared_ ? 0 : std::stoull(row.at(0, 0));
    if (spec_.shape == Shape::multi) f.each.assign(spec_.names.size(), f.fence);
    std::string farewell;
    if (a.status = store_.on_grant(*s, spec_, token, f.fence, keep, farewell); !a.status.ok()) {
        s->close();  // the grant goes with the session: an attempt that failed took nothing
        hand_over(token);
        return;
    }
    a.acquired = true;
    store_.watch(s);
    hand_over(token, std::move(farewell), {f.fence, keep});
}

void SqlClaim::wait(Clock::time_point until) {
    if (!session_ || held_ == keys_->keys.size() || cancel_.stop_requested()) return;
    auto s = session_;
    std::lock_guard lock(s->m);
    if (until <= Clock::now()) return;
    if (store_.wait_in_server(*s, keys_->keys[held_], shared_, until, wake_.fd()))
        ++held_;  // the next attempt takes the rest
    else if (!s->alive())
        session_.reset(), held_ = 0;  // cancelled or cut off: the session went, with its keys
}

std::shared_ptr<Holding> SqlClaim::holding(const std::string& token,
                                           std::chrono::milliseconds /*keep*/,
                                           std::uint64_t /*fence*/) const {
    if (auto h = places_.find(token)) return h;
    return std::make_shared<SqlHolding>(nullptr, keys_, shared_);
}

std::shared_ptr<Holding> SqlClaim::waiter(const std::string& token,
                                          std::chrono::milliseconds keep) const {
    return holding(token, keep, 0);
}

}  // namespace deadbolt::detail
