#include "backends/postgres/conn.hpp"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>

#include "core/token.hpp"

namespace deadbolt::detail {
namespace {

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// libpq reports a failed connection as text only.
Status connect_error(const std::string& where, std::string msg, const std::string& user) {
    auto has = [&](std::string_view s) { return msg.find(s) != std::string::npos; };
    if (has("password authentication failed") || has("no password supplied") ||
        (has("role") && has("does not exist")))
        return Status::error(errc::auth_failed,
                             fmt::format("PostgreSQL at {} refused user '{}': {}; check the user "
                                         "and password in the URL",
                                         where, user, msg));
    if (has("database") && has("does not exist"))
        return Status::error(errc::server_error,
                             fmt::format("PostgreSQL at {}: {}; create it (createdb) or name "
                                         "another database in the URL",
                                         where, msg));
    if (has("no pg_hba.conf entry") || has("permission denied"))
        return Status::error(errc::permission_denied,
                             fmt::format("PostgreSQL at {}: {}", where, msg));
    if (has("client_connection_check_interval") || has("idle_session_timeout"))
        return Status::error(errc::server_error,
                             fmt::format("PostgreSQL at {} is older than 14, which deadbolt needs "
                                         "(idle_session_timeout keeps a lock's TTL): {}",
                                         where, msg));
    return Status::error(errc::connect_failed,
                         fmt::format("cannot connect to PostgreSQL at {}: {}", where, msg));
}

// "deadbolt <host>:<pid>": pg_stat_activity then says which process holds a lock.
std::string application_name() {
    auto origin = token_origin(random_token());
    if (!origin) return "deadbolt";
    return fmt::format("deadbolt {}:{}", origin->host, origin->pid).substr(0, 63);
}

}  // namespace

errc errc_of_sqlstate(std::string_view s) {
    if (s == "28P01" || s == "28000") return errc::auth_failed;
    if (s == "42501") return errc::permission_denied;
    if (s == "22023") return errc::invalid_argument;  // deadbolt's functions refuse a use
    if (s == "25006") return errc::readonly;
    if (s == "55P03" || s == "40P01") return errc::not_acquired;  // lock timeout, deadlock
    if (s == "57014") return errc::cancelled;
    if (s.starts_with("57P") || s.starts_with("08")) return errc::connection_lost;
    if (s == "53300") return errc::connect_failed;  // too many connections
    if (s.starts_with("53")) return errc::out_of_memory;
    return errc::server_error;
}

Status PgConn::open(const PgUrl& url, Clock::time_point by, std::shared_ptr<PgConn>& out) {
    auto kw = url.keywords();
    static const std::string kName = application_name();
    for (auto& [k, v] : kw)
        if (k == "application_name" && v == "deadbolt") v = kName;
    // The backend notices a waiter that went away while it waits for a lock (the wait would
    // otherwise end only when the lock came); TCP keepalives find a peer that vanished.
    kw.emplace_back("options", "-c client_connection_check_interval=1000");
    kw.emplace_back("keepalives_idle", "10");
    kw.emplace_back("keepalives_interval", "5");
    kw.emplace_back("keepalives_count", "3");
    std::vector<const char*> keys, values;
    for (const auto& [k, v] : kw) keys.push_back(k.c_str()), values.push_back(v.c_str());
    keys.push_back(nullptr);
    values.push_back(nullptr);
    std::shared_ptr<PgConn> conn(new PgConn);
    conn->where_ = url.describe();
    conn->c_ = PQconnectStartParams(keys.data(), values.data(), 0);
    if (!conn->c_)
        return Status::error(errc::out_of_memory, "libpq could not allocate a connection");
    auto failed = [&] {
        return connect_error(conn->where_, trimmed(PQerrorMessage(conn->c_)), url.options.username);
    };
    if (PQstatus(conn->c_) == CONNECTION_BAD) return failed();
    for (;;) {
        auto r = PQconnectPoll(conn->c_);
        if (r == PGRES_POLLING_OK) break;
        if (r == PGRES_POLLING_FAILED) return failed();
        bool woken = false;
        if (!wait_socket(PQsocket(conn->c_), r == PGRES_POLLING_WRITING, by, -1, woken))
            return Status::error(errc::connect_failed,
                                 fmt::format("PostgreSQL at {} did not answer within the connect "
                                             "timeout",
                                             conn->where_));
    }
    PQsetnonblocking(conn->c_, 1);
    conn->fd_.store(PQsocket(conn->c_));
    conn->id = static_cast<std::uint64_t>(PQbackendPID(conn->c_));
    conn->last_used = Clock::now();
    out = std::move(conn);
    return {};
}

PgConn::~PgConn() {
    close();
}

int PgConn::socket() const {
    return fd_.load();
}

bool PgConn::ended_while_idle() {
    // An idle session has nothing to say unless the server ended it (a FATAL, then EOF), or
    // reports a setting (ParameterStatus), which consuming takes in.
    for (int reads = 0; c_ && reads < 4; ++reads) {
        pollfd pending{PQsocket(c_), POLLIN, 0};
        if (::poll(&pending, 1, 0) <= 0) return false;
        if (!PQconsumeInput(c_) || PQstatus(c_) != CONNECTION_OK) {
            close();
            return true;
        }
    }
    return false;
}

Status PgConn::await_notice(Clock::time_point by, int wake_fd, bool& heard) {
    heard = false;
    for (;;) {
        if (!c_)
            return Status::error(
                errc::connection_lost,
                fmt::format("the connection to PostgreSQL at {} is closed", where_));
        // Every notification is a wake-up of the same kind: all are taken at once.
        while (PGnotify* n = PQnotifies(c_)) {
            PQfreemem(n);
            heard = true;
        }
        if (heard) return {};
        bool woken = false;
        if (!wait_socket(PQsocket(c_), false, by, wake_fd, woken)) return {};
        if (!PQconsumeInput(c_) || PQstatus(c_) != CONNECTION_OK) {
            close();
            return Status::error(errc::connection_lost,
                                 fmt::format("PostgreSQL at {} ended the session", where_));
        }
    }
}

bool PgConn::alive() const {
    return fd_.load() >= 0;
}

void PgConn::close() noexcept {
    fd_.store(-1);
    if (c_) PQfinish(c_);
    c_ = nullptr;
}

Status PgConn::run(std::string_view sql, Clock::time_point by, std::vector<SqlRows>& out,
                   int wake_fd) {
    SqlAnswers answers(out);
    if (!alive())
        return Status::error(errc::connection_lost,
                             fmt::format("the connection to PostgreSQL at {} is closed", where_));
    text_.assign(sql);  // libpq reads a C string; the room stays for the next statement
    bool sent = false;
    auto broke = [&](std::string what) {
        auto msg = trimmed(PQerrorMessage(c_));
        close();
        return Status::error(
            sent ? errc::unknown_outcome : errc::connection_lost,
            fmt::format("{} PostgreSQL at {}{}{}", what, where_, msg.empty() ? "" : ": ", msg));
    };
    auto waited = [&](bool write) {
        bool woken = false;
        if (wait_socket(PQsocket(c_), write, by, wake_fd, woken)) return Status{};
        close();  // the session ends, and with it anything the statement may have taken
        if (woken) return Status::error(errc::cancelled, "cancelled while PostgreSQL worked");
        return Status::error(sent ? errc::unknown_outcome : errc::timeout,
                             fmt::format("no answer from PostgreSQL at {} in time", where_));
    };
    if (ended_before_statement())
        return Status::error(errc::connection_lost,
                             fmt::format("PostgreSQL at {} ended the session", where_));
    if (!PQsendQuery(c_, text_.c_str())) return broke("lost the connection to");
    sent = true;
    for (int f; (f = PQflush(c_)) != 0;) {
        if (f < 0) return broke("lost the connection to");
        if (auto st = waited(true); !st.ok()) return st;
    }
    Status first_error;
    for (;;) {
        while (PQisBusy(c_)) {
            if (auto st = waited(false); !st.ok()) return st;
            if (!PQconsumeInput(c_)) return broke("lost the connection to");
        }
        PGresult* r = PQgetResult(c_);
        if (!r) break;
        auto status = PQresultStatus(r);
        if (status == PGRES_TUPLES_OK) {
            SqlRows& rows = answers.next(static_cast<std::size_t>(PQnfields(r)));
            rows.cells.reserve(static_cast<std::size_t>(PQntuples(r)) * rows.columns);
            for (int i = 0; i < PQntuples(r); ++i)
                for (int j = 0; j < PQnfields(r); ++j)
                    rows.cells.push_back(
                        PQgetisnull(r, i, j)
                            ? std::nullopt
                            : std::optional<std::string>(
                                  std::string(PQgetvalue(r, i, j),
                                              static_cast<std::size_t>(PQgetlength(r, i, j)))));
        } else if (status == PGRES_COMMAND_OK) {
            answers.next(0);
        } else if (first_error.ok()) {
            const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
            const char* msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
            std::string code = state ? state : "";
            first_error =
                Status::error(code.empty() ? errc::connection_lost : errc_of_sqlstate(code),
                              fmt::format("PostgreSQL at {}: {}{}", where_,
                                          msg ? msg : trimmed(PQerrorMessage(c_)),
                                          code.empty() ? "" : " (SQLSTATE " + code + ")"));
        }
        PQclear(r);
    }
    last_used = Clock::now();
    if (PQstatus(c_) != CONNECTION_OK) close();  // a FATAL ended the session
    return first_error;
}

}  // namespace deadbolt::detail
