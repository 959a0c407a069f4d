#include "backends/postgres/store.hpp"

#include <fmt/format.h>

#include "backends/postgres/claim.hpp"
#include "backends/postgres/holding.hpp"
#include "backends/postgres/keys.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::size_t kPooled = 16;  // idle sessions kept for the next holdings

const PgHolding& pg(const Holding* h) {
    return static_cast<const PgHolding&>(*h);
}

// A statement's verdict on a holding's session: no when the session is gone (and with it
// the locks), unknown when no answer came.
Verdict verdict_of(const Status& st) {
    if (st.ok()) return Verdict::yes();
    if (st.ec == make_error_code(errc::unknown_outcome) || st.ec == make_error_code(errc::timeout))
        return Verdict::unknown(st);
    if (st.ec == make_error_code(errc::connection_lost)) return Verdict::no();
    return Verdict::unknown(st);
}

}  // namespace

PgStore::PgStore(ClientImpl& c, PgUrl url, std::shared_ptr<PgConn> first)
    : client_(c), url_(std::move(url)) {
    idle_.push_back(std::move(first));
}

PgStore::~PgStore() = default;

Status PgStore::supports(const LockSpec& spec) const {
    switch (spec.shape) {
        case Shape::exclusive:
        case Shape::fair:
        case Shape::write:
        case Shape::read:
        case Shape::multi:
            break;
        default:
            return Status::error(
                errc::invalid_argument,
                fmt::format("deadbolt's PostgreSQL backend does not offer {} yet (Mutex, "
                            "FairMutex, RWLock and MultiLock are built): use it on Redis, etcd "
                            "or ZooKeeper",
                            primitive_of(spec.shape)));
    }
    if (spec.options.lock_delay.count() > 0)
        return Status::error(errc::invalid_argument,
                             "lock_delay cannot be kept on PostgreSQL: the server hands an ended "
                             "session's locks to the next waiter at once");
    return {};
}

Status PgStore::offers(std::string_view primitive) const {
    if (primitive == "FairMutex" || primitive == "force_unlock") return {};
    return Status::error(errc::invalid_argument,
                         fmt::format("deadbolt's PostgreSQL backend does not offer {} yet (Mutex, "
                                     "FairMutex, RWLock and MultiLock are built): use it on "
                                     "Redis, etcd or ZooKeeper",
                                     primitive));
}

std::unique_ptr<Claim> PgStore::open(const LockSpec& spec, std::stop_token cancel) {
    return std::make_unique<PgClaim>(*this, spec, std::move(cancel));
}

Status PgStore::borrow(std::shared_ptr<PgConn>& out) {
    {
        std::lock_guard lock(m_);
        auto now = Clock::now();
        while (!idle_.empty()) {
            auto c = std::move(idle_.back());
            idle_.pop_back();
            // One idle for most of its timeout may be ended by the server as we use it.
            bool fresh = c->idle_timeout.count() == 0 || now - c->last_used < c->idle_timeout / 2;
            if (c->alive() && fresh) {
                out = std::move(c);
                return {};
            }
        }
    }
    return PgConn::open(url_, Clock::now() + client_.options.connect_timeout, out);
}

void PgStore::give_back(std::shared_ptr<PgConn> c) noexcept {
    if (!c || !c->alive()) return;
    std::lock_guard lock(m_);
    if (idle_.size() < kPooled) idle_.push_back(std::move(c));
}

std::string PgStore::naming(const std::vector<std::string>& names) {
    std::string values;
    std::lock_guard lock(m_);
    for (const auto& n : names)
        if (!named_.contains(n))
            values += fmt::format("{}({}, {})", values.empty() ? "" : ", ", advisory_key(n),
                                  bytea_literal(n));
    if (values.empty()) return {};
    return fmt::format("INSERT INTO {}.names VALUES {} ON CONFLICT (key) DO NOTHING;", url_.schema,
                       values);
}

void PgStore::noted(const std::vector<std::string>& names) {
    std::lock_guard lock(m_);
    named_.insert(names.begin(), names.end());
}

std::vector<Verdict> PgStore::extend(std::span<const Renewal> rs, Clock::time_point by) {
    std::vector<Verdict> out;
    for (const auto& r : rs) {
        auto c = pg(r.holding).conn();
        if (!c) {
            out.push_back(Verdict::no());
            continue;
        }
        std::lock_guard lock(c->m);
        // The statement proves the session alive, and its idle timeout runs from here.
        std::vector<PgRows> rows;
        auto st = c->run(fmt::format("SET idle_session_timeout = {}", r.keep.count()), by, rows);
        if (st.ok()) c->idle_timeout = r.keep;
        out.push_back(verdict_of(st));
    }
    return out;
}

std::vector<Verdict> PgStore::release(std::span<const Holding* const> hs, Clock::time_point by) {
    std::vector<Verdict> out;
    for (const auto* h : hs) {
        const auto& ph = pg(h);
        auto c = ph.take();
        if (!c || !c->alive()) {
            out.push_back(Verdict::no());  // its session ended, and the server freed its keys
            continue;
        }
        std::unique_lock lock(c->m);
        std::vector<PgRows> rows;
        auto st = c->run(fmt::format("SELECT bool_and(pg_advisory_unlock{}(k)) FROM unnest({}) k; "
                                     "SET idle_session_timeout = 0",
                                     ph.shared ? "_shared" : "", keys_literal(ph.keys)),
                         by, rows);
        auto v = verdict_of(st);
        if (st.ok() && rows.front().at(0, 0) != "t") v = Verdict::no();
        lock.unlock();
        if (v.is == Verdict::Is::yes) {
            c->idle_timeout = std::chrono::milliseconds(0);
            give_back(std::move(c));
        } else {
            c->close();  // whatever it held goes with the session
        }
        out.push_back(std::move(v));
    }
    return out;
}

std::vector<Verdict> PgStore::check(std::span<const Holding* const> hs, Clock::time_point by) {
    std::vector<Verdict> out;
    for (const auto* h : hs) {
        const auto& ph = pg(h);
        auto c = ph.conn();
        if (!c || !c->alive()) {
            out.push_back(Verdict::no());
            continue;
        }
        std::lock_guard lock(c->m);
        std::vector<PgRows> rows;
        auto st = c->run(fmt::format("SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() "
                                     "AND locktype = 'advisory' AND granted AND objsubid = 1 AND "
                                     "(classid::bigint << 32 | objid::bigint) = ANY({})",
                                     keys_literal(ph.keys)),
                         by, rows);
        auto v = verdict_of(st);
        if (st.ok() && std::stoul(rows.front().at(0, 0)) < ph.keys.size()) v = Verdict::no();
        out.push_back(std::move(v));
    }
    return out;
}

Status PgStore::run_once(const std::string& sql, std::vector<PgRows>& out) {
    std::shared_ptr<PgConn> c;
    if (auto st = borrow(c); !st.ok()) return st;
    Status st;
    {
        std::lock_guard lock(c->m);
        st = c->run(sql, deadline(), out);
    }
    give_back(std::move(c));
    return st;
}

Status PgStore::ping() {
    std::vector<PgRows> out;
    return run_once("SELECT 1", out);
}

}  // namespace deadbolt::detail
