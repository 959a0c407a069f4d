#include "backends/postgres/listener.hpp"

#include <fmt/format.h>

#include <utility>
#include <vector>

namespace deadbolt::detail {

PgListener::PgListener(SqlStore& store, std::string channel, const std::stop_token& cancel)
    : store_(store), channel_(std::move(channel)), wake_(cancel) {}

PgListener::~PgListener() {
    // A session that still listens is not pooled.
    store_.give_back_after(std::move(session_), "UNLISTEN *", "");
}

Status PgListener::arm(Clock::time_point /*until*/) {
    if (session_ && session_->alive()) return {};
    std::shared_ptr<SqlSession> s;
    if (auto st = store_.borrow(s); !st.ok()) return st;
    auto pg = std::static_pointer_cast<PgConn>(std::move(s));
    std::lock_guard lock(pg->m);
    std::vector<SqlRows> out;
    if (auto st = pg->run(fmt::format("LISTEN \"{}\"", channel_), store_.deadline(), out);
        !st.ok()) {
        pg->close();
        return st;
    }
    session_ = std::move(pg);
    return {};
}

void PgListener::wait(Clock::time_point until) {
    // A session that ended missed what came meanwhile: listen again, and the look that
    // follows this return sees it.
    if (!session_ || !session_->alive()) {
        session_.reset();
        static_cast<void>(arm(until));  // when it fails, the look fails the same way, and says why
        return;
    }
    auto s = session_;
    std::lock_guard lock(s->m);
    bool heard = false;
    if (!s->await_notice(until, wake_.fd(), heard).ok()) session_.reset();
}

}  // namespace deadbolt::detail
