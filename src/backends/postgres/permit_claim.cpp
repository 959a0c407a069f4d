#include "backends/postgres/permit_claim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "backends/postgres/keys.hpp"

namespace deadbolt::detail {

PgPermitClaim::PgPermitClaim(SqlStore& store, const LockSpec& spec, std::string schema,
                             std::stop_token cancel)
    : store_(store),
      spec_(spec),
      schema_(std::move(schema)),
      key_(std::to_string(advisory_key(spec.name))),
      permits_(spec.shape == Shape::reentrant ? 0 : spec.permits),
      // An owner's live holding, wherever it was taken, is re-entered; a leftover of this
      // client's default owner (a lost reply's grant) is a new holding instead.
      reenter_(spec.shape == Shape::reentrant && !spec.leftover_is_new),
      cancel_(std::move(cancel)),
      wake_(cancel_) {
    // No line of this process's threads: a holder of a permit must not keep others of its
    // process from the next; each waits at the gate in the server's queue. A waiter leaves
    // nothing to abandon: a row is made only by a grant, and the gate goes with the claim.
    // (A release by a reentrant owner's token would take a hold of its holding elsewhere.)
    traits_.expiry_wakes = true;  // the gate's queue and the LISTEN wake; a row's expiry is pttl
}

PgPermitClaim::~PgPermitClaim() {
    drop_session();
}

void PgPermitClaim::drop_session() noexcept {
    if (!session_) return;
    auto s = std::move(session_);
    session_.reset();
    bool gate = std::exchange(at_gate_, false), listens = std::exchange(listening_, false);
    if (!gate && !listens) {
        store_.give_back(std::move(s));
        return;
    }
    // The next waiter's turn at the gate now, not when the server notices a close.
    try {
        std::string sql = listens ? "UNLISTEN *;" : "";
        sql += gate ? fmt::format("SELECT pg_advisory_unlock({})", key_) : "SELECT true";
        store_.give_back_after(std::move(s), sql, "t");
    } catch (...) {  // no memory: s is dropped, and closing it frees the gate
    }
}

void PgPermitClaim::attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                            Fences& f) {
    if (session_ && !session_->alive()) session_.reset(), at_gate_ = listening_ = false;
    if (!session_) {
        std::shared_ptr<SqlSession> s;
        if (a.status = store_.borrow(s); !a.status.ok()) return;
        session_ = std::static_pointer_cast<PgConn>(std::move(s));
    }
    auto s = session_;
    std::unique_lock lock(s->m);
    // The gate's holder listens before it counts: a release after the count then wakes it.
    // LISTEN takes effect when its transaction commits, and statements sent together share
    // one: it goes alone, committed before the count looks (together, a release committed
    // between the count and that commit woke nobody: PgSemaphore.ManyTakers... waited out
    // its 10 s under load).
    std::vector<SqlRows> out;
    if (at_gate_ && !listening_) {
        a.status = s->run(fmt::format("LISTEN \"deadbolt_{}\"", key_), store_.deadline(), out);
        if (!a.status.ok()) {
            s->close();  // the gate goes with the session
            session_.reset(), at_gate_ = listening_ = false;
            return;
        }
        listening_ = true;
    }
    std::string sql = s->idle_timeout != keep ? store_.dialect().keep(keep) : std::string();
    auto sent = Clock::now();  // a moment before it is sent: as safe for the names' trust
    std::vector<std::string> fresh;
    Clock::time_point trusted_until;
    sql += store_.naming(std::span<const std::string>(&spec_.name, 1), fresh, sent, trusted_until);
    // One permit excludes every other holder: fenced like a lock (ARCHITECTURE 15). A
    // re-entry answers its holding's fence.
    sql += fmt::format("SELECT * FROM {}.take_permit({}, {}, {}, {}, {}, {}, {})", schema_, key_,
                       permits_, bytea_literal(token), keep.count(), at_gate_, permits_ <= 1,
                       reenter_);
    a.status = store_.advised(s->run(sql, store_.deadline(), out));
    if (!a.status.ok()) {
        // The gate, and a row if the answer was lost, may be ours: the session goes with the
        // gate, and the cleanup of an unknown outcome deletes the row by our token.
        s->close();
        session_.reset(), at_gate_ = listening_ = false;
        return;
    }
    s->idle_timeout = keep;
    if (!fresh.empty()) store_.noted(fresh, sent);
    const auto& row = out.back();
    // take_permit says whether the session holds the gate now: a grant through the gate
    // left it, an owner's re-entry did not pass it (and one already at the gate keeps it
    // until drop_session()).
    at_gate_ = row.at(0, 2) == "t";
    if (!row.null(0, 0)) {
        a.acquired = true;
        f.fence = std::stoull(row.at(0, 0));
        lock.unlock();
        drop_session();
        return;
    }
    a.pttl = std::chrono::milliseconds(-1);  // at the gate: the server lets us in
    // Past it, the earliest row's expiry frees a permit without a word; and the gate's
    // session must speak within its idle timeout, or the server ends it.
    if (at_gate_) a.pttl = std::min(std::chrono::milliseconds(std::stoll(row.at(0, 1))), keep / 3);
}

void PgPermitClaim::wait(Clock::time_point until) {
    if (!session_ || cancel_.stop_requested() || until <= Clock::now()) return;
    auto s = session_;
    std::lock_guard lock(s->m);
    if (at_gate_) {
        if (!listening_) return;  // the next attempt listens, then counts
        bool heard = false;
        if (!s->await_notice(until, wake_.fd(), heard).ok())
            session_.reset(), at_gate_ = listening_ = false;
        return;
    }
    if (store_.wait_in_server(*s, key_, false, until, wake_.fd()))
        at_gate_ = true;
    else if (!s->alive())
        session_.reset();  // cancelled or cut off: its place in the line went with it
}

std::shared_ptr<Holding> PgPermitClaim::holding(const std::string& token,
                                                std::chrono::milliseconds /*keep*/,
                                                std::uint64_t fence) const {
    auto row = std::make_shared<SqlRow>(key_, token);
    if (permits_ == 0) row->fence = fence;  // a ReentrantMutex's: its release spares the next
    return row;
}

}  // namespace deadbolt::detail
