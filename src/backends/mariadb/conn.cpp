#include "backends/mariadb/conn.hpp"

#include <fmt/format.h>
#include <mysql.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>

#include "backends/mariadb/schema.hpp"

namespace deadbolt::detail {
namespace {

// Codes after which the session is gone: the server ended it, or the link broke.
bool ends_session(unsigned n) {
    return n == 2006 || n == 2013 || n == 2055 || n == 4031 || n == 1927 || n == 1053;
}

}  // namespace

errc errc_of_mysql(unsigned n) {
    switch (n) {
        case 1045:  // access denied (user or password)
        case 1698:
            return errc::auth_failed;
        case 1044:  // no rights on the database
        case 1142:  // no rights on a table
        case 1143:
        case 1227:
            return errc::permission_denied;
        case 1290:  // --read-only
        case 1792:  // a read-only transaction
        case 1836:  // read_only
            return errc::readonly;
        case 3058:  // user lock deadlock
        case 1205:  // lock wait timeout
            return errc::not_acquired;
        case 1317:  // interrupted
            return errc::cancelled;
        case 1040:  // too many connections
        case 2002:
        case 2003:
        case 2005:
            return errc::connect_failed;
        default:
            return ends_session(n) ? errc::connection_lost : errc::server_error;
    }
}

namespace {

// Asks Connector/C for TLS as url says (nothing when it asks for none).
void ask_tls(st_mysql* db, const TlsOptions& tls) {
    if (!tls.enabled) return;
    // verify=0 checks nothing: a CA given would still have its chain checked.
    if (!tls.ca_file.empty() && tls.verify)
        mysql_optionsv(db, MYSQL_OPT_SSL_CA, tls.ca_file.c_str());
    if (!tls.cert_file.empty()) mysql_optionsv(db, MYSQL_OPT_SSL_CERT, tls.cert_file.c_str());
    if (!tls.key_file.empty()) mysql_optionsv(db, MYSQL_OPT_SSL_KEY, tls.key_file.c_str());
    my_bool verify = tls.verify ? 1 : 0, enforce = 1;
    mysql_optionsv(db, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    mysql_optionsv(db, MYSQL_OPT_SSL_ENFORCE, &enforce);
}

// A file the URL names that cannot be read, as an error naming the option; "" when all are.
std::string unreadable(const TlsOptions& tls) {
    for (auto [option, file] : {std::pair{"ca", &tls.ca_file}, std::pair{"cert", &tls.cert_file},
                                std::pair{"key", &tls.key_file}}) {
        if (file->empty()) continue;
        if (std::FILE* f = std::fopen(file->c_str(), "r")) {
            std::fclose(f);
            continue;
        }
        return fmt::format("cannot read {}={}: {}", option, *file, std::strerror(errno));
    }
    return {};
}

// What to do about a failed TLS handshake, from Connector/C's words for it.
std::string tls_advice(const std::string& msg, const MyUrl& url) {
    auto has = [&](std::string_view s) { return msg.find(s) != std::string::npos; };
    const auto& tls = url.options.tls;
    if (has("Validation of SSL server certificate failed"))
        return fmt::format(
            "the server's certificate does not name host '{}': connect by a name it holds",
            url.server.host);
    if (has("not support") || has("SSL is required"))
        return "the server offers no TLS (start it with ssl_cert and ssl_key), or drop tls=1";
    if (has("certificate") || has("verify") || has("issuer"))
        return tls.ca_file.empty()
                   ? "the server's certificate is not signed by a CA this system trusts: name "
                     "the CA that signed it with ca=FILE"
                   : fmt::format("the server's certificate is not signed by the CA in ca={}",
                                 tls.ca_file);
    return "check ca, cert and key in the URL";
}

}  // namespace

int MyConn::drive_connect(const MyUrl& url, bool tls, Clock::time_point by) {
    db_ = mysql_init(nullptr);
    if (!db_) return -1;
    mysql_options(db_, MYSQL_OPT_NONBLOCK, nullptr);
    mysql_options(db_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    auto options = url.options.tls;
    if (tls && !options.enabled) options = {.enabled = true, .verify = false};  // a probe
    ask_tls(db_, tls ? options : TlsOptions{});
    MYSQL* ret = nullptr;
    int status =
        mysql_real_connect_start(&ret, db_, url.server.host.c_str(), url.options.username.c_str(),
                                 url.options.password.c_str(), url.database.c_str(),
                                 url.server.port, nullptr, CLIENT_MULTI_STATEMENTS);
    bool woken = false;
    while (status) {
        int ready = await(status, by, -1, woken);
        if (!ready) return 0;
        status = mysql_real_connect_cont(&ret, db_, ready);
    }
    return ret ? 1 : 2;
}

Status MyConn::open(const MyUrl& url, Clock::time_point by, std::shared_ptr<MyConn>& out) {
    static std::once_flag init;
    std::call_once(init, [] { mysql_library_init(0, nullptr, nullptr); });
    const auto& tls = url.options.tls;
    if (auto why = tls.enabled ? unreadable(tls) : std::string(); !why.empty())
        return Status::error(
            errc::connect_failed,
            fmt::format("cannot connect to MariaDB at {} over TLS: {}", url.describe(), why));
    std::shared_ptr<MyConn> c(new MyConn);
    c->where_ = url.describe();
    int got = c->drive_connect(url, tls.enabled, by);
    if (got < 0) return Status::error(errc::out_of_memory, "Connector/C could not allocate");
    if (got == 0)
        return Status::error(errc::connect_failed,
                             fmt::format("MariaDB at {} did not answer within the connect "
                                         "timeout",
                                         c->where_));
    if (got == 2) {
        unsigned n = mysql_errno(c->db_);
        std::string msg = mysql_error(c->db_);
        auto e = errc_of_mysql(n);
        unsigned long caps = 0;
        mariadb_get_infov(c->db_, MARIADB_CONNECTION_SERVER_CAPABILITIES, &caps);
        if (n == 1049) {
            msg += "; create it (CREATE DATABASE) or name another database in the URL";
        } else if (n == 1044) {
            msg += "; " + my_grants(url.database, url.options.username);
        } else if (n == 2026) {
            e = errc::connect_failed;
            return Status::error(e, fmt::format("cannot connect to MariaDB at {} over TLS: {}; {}",
                                                c->where_, msg, tls_advice(msg, url)));
        } else if (e == errc::auth_failed && !tls.enabled && (caps & CLIENT_SSL) &&
                   MyConn().drive_connect(url, true, by) == 1) {
            // A server that requires secure transport refuses a plain connection as it
            // refuses a wrong password; the same credentials over TLS tell them apart.
            return Status::error(
                errc::connect_failed,
                fmt::format("cannot connect to MariaDB at {}: it refuses connections without "
                            "TLS (require_secure_transport): add tls=1 to the URL, and ca=FILE "
                            "unless this system trusts the CA that signed its certificate",
                            c->where_));
        } else if (e == errc::auth_failed) {
            msg += "; check the user and password in the URL";
        } else if (e == errc::connection_lost || e == errc::server_error) {
            e = errc::connect_failed;
        }
        return Status::error(e, fmt::format("cannot connect to MariaDB at {}: {}", c->where_, msg));
    }
    c->fd_.store(static_cast<int>(mysql_get_socket(c->db_)));
    c->id = mysql_thread_id(c->db_);
    c->version_ = mysql_get_server_version(c->db_);
    c->last_used = Clock::now();
    out = std::move(c);
    return {};
}

MyConn::~MyConn() {
    close();
}

void MyConn::close() noexcept {
    fd_.store(-1);
    if (db_) mysql_close(db_);
    db_ = nullptr;
}

int MyConn::socket() const {
    return fd_.load();
}

bool MyConn::ended_while_idle() {
    // An idle session hears from the server only when it ends it (KILL, wait_timeout, a
    // shutdown: an error packet, then EOF).
    if (!db_) return false;
    pollfd pending{mysql_get_socket(db_), POLLIN, 0};
    if (::poll(&pending, 1, 0) <= 0) return false;
    close();
    return true;
}

int MyConn::await(int status, Clock::time_point by, int wake_fd, bool& woken) const {
    short events = 0;
    if (status & MYSQL_WAIT_READ) events |= POLLIN;
    if (status & MYSQL_WAIT_WRITE) events |= POLLOUT;
    if (status & MYSQL_WAIT_EXCEPT) events |= POLLPRI;
    pollfd fds[2] = {{mysql_get_socket(db_), events, 0}, {wake_fd, POLLIN, 0}};
    for (;;) {
        auto end = by;
        if (status & MYSQL_WAIT_TIMEOUT)
            end = std::min(
                end, Clock::now() + std::chrono::milliseconds(mysql_get_timeout_value_ms(db_)));
        int ms = -1;
        if (end != Clock::time_point::max())
            ms = static_cast<int>(std::clamp<long long>(
                std::chrono::ceil<std::chrono::milliseconds>(end - Clock::now()).count(), 0,
                1 << 30));
        int n = ::poll(fds, wake_fd >= 0 ? 2 : 1, ms);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0 && wake_fd >= 0 && (fds[1].revents & POLLIN)) return woken = true, 0;
        if (n == 0) {
            if (Clock::now() >= by) return 0;
            return MYSQL_WAIT_TIMEOUT;  // the library's own timer
        }
        int ready = 0;
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) ready |= MYSQL_WAIT_READ;
        if (fds[0].revents & (POLLOUT | POLLHUP | POLLERR)) ready |= MYSQL_WAIT_WRITE;
        if (fds[0].revents & POLLPRI) ready |= MYSQL_WAIT_EXCEPT;
        return ready ? ready : MYSQL_WAIT_READ;
    }
}

Status MyConn::error(bool sent) {
    unsigned n = mysql_errno(db_);
    auto e = errc_of_mysql(n);
    // Lost mid-statement: it may have run (its locks went with the session, though).
    if (ends_session(n) && sent && (n == 2013 || n == 2055)) e = errc::unknown_outcome;
    auto st =
        Status::error(e, fmt::format("MariaDB at {}: {} (error {})", where_, mysql_error(db_), n));
    if (ends_session(n)) close();
    return st;
}

Status MyConn::run(std::string_view sql, Clock::time_point by, std::vector<SqlRows>& out,
                   int wake_fd) {
    SqlAnswers answers(out);
    if (!alive())
        return Status::error(errc::connection_lost,
                             fmt::format("the connection to MariaDB at {} is closed", where_));
    if (ended_before_statement())
        return Status::error(errc::connection_lost,
                             fmt::format("MariaDB at {} ended the session", where_));
    bool woken = false;
    // Drives one non-blocking call to its end; false when time ran out or a wake came (the
    // connection is then closed: the server ends the session and frees what it held).
    auto drive = [&](int status, auto cont) {
        while (status) {
            int ready = await(status, by, wake_fd, woken);
            if (!ready) {
                close();
                return false;
            }
            status = cont(ready);
        }
        return true;
    };
    auto lapsed = [&] {
        if (woken) return Status::error(errc::cancelled, "cancelled while MariaDB worked");
        return Status::error(errc::unknown_outcome,
                             fmt::format("no answer from MariaDB at {} in time", where_));
    };
    int err = 0;
    if (!drive(mysql_real_query_start(&err, db_, sql.data(), sql.size()),
               [&](int ready) { return mysql_real_query_cont(&err, db_, ready); }))
        return lapsed();
    if (err) return error(true);
    for (;;) {
        MYSQL_RES* res = nullptr;
        if (!drive(mysql_store_result_start(&res, db_),
                   [&](int ready) { return mysql_store_result_cont(&res, db_, ready); }))
            return lapsed();
        if (res) {
            unsigned fields = mysql_num_fields(res);
            SqlRows& rows = answers.next(fields);
            rows.cells.reserve(mysql_num_rows(res) * fields);
            while (MYSQL_ROW row = mysql_fetch_row(res)) {
                auto* lengths = mysql_fetch_lengths(res);
                for (unsigned i = 0; i < fields; ++i)
                    rows.cells.push_back(
                        row[i] ? std::optional<std::string>(std::string(row[i], lengths[i]))
                               : std::nullopt);
            }
            mysql_free_result(res);
        } else if (mysql_field_count(db_) != 0) {
            return error(true);
        } else {
            answers.next(0);
        }
        int more = 0;
        if (!drive(mysql_next_result_start(&more, db_),
                   [&](int ready) { return mysql_next_result_cont(&more, db_, ready); }))
            return lapsed();
        if (more > 0) return error(true);
        if (more < 0) break;
    }
    last_used = Clock::now();
    return {};
}

}  // namespace deadbolt::detail
