// PgListener: the wake-up of a waiter for something a PostgreSQL statement announces with
// NOTIFY (a latch opening, a new leader). Armed, its own session LISTENs on the channel, so a
// change committed after that is heard; the waiter looks (on any session) after arming, then
// waits for a notification, its deadline or its cancel. An expiry announces nothing: the
// waiter's look says when to wake for it (core/watch.hpp).
#pragma once

#include <memory>
#include <stop_token>
#include <string>

#include "backends/postgres/conn.hpp"
#include "backends/sql/cancel_fd.hpp"
#include "backends/sql/store.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class PgListener final : public Waker {
  public:
    PgListener(SqlStore& store, std::string channel, const std::stop_token& cancel);
    /// Stops listening and pools the session (closes it when that fails). Never throws.
    ~PgListener() override;
    PgListener(const PgListener&) = delete;
    PgListener& operator=(const PgListener&) = delete;

    /// LISTENs on the channel, once (a session of its own, borrowed now).
    Status arm(Clock::time_point until) override;
    /// Keeps listening: a notification between two waits is kept for the next.
    void disarm() noexcept override {}
    /// Until a notification, until, or the cancel. When the session ended, listens on a new
    /// one at once instead: the look after this return sees what was missed.
    void wait(Clock::time_point until) override;

  private:
    SqlStore& store_;
    const std::string channel_;
    CancelFd wake_;
    std::shared_ptr<PgConn> session_;
};

}  // namespace deadbolt::detail
