// Scenarios 1-2 against the databases with no library logic: the engine's own try-lock and
// unlock, one round trip each, on a session per thread (the least a lock there can cost); and
// with --statements, the statements deadbolt sends for a fenced Mutex (its fence drawn and its
// holding named in the same round trip), so that what the library adds is told apart from
// what its statements cost the server. Those are written out here as deadbolt's dialects
// make them (backends/postgres/dialect.cpp, backends/mariadb/dialect.cpp): change them
// together.
#include <libpq-fe.h>
#include <mysql.h>
#include <unistd.h>

#include <deadbolt/client.hpp>
#include <regex>
#include <stdexcept>
#include <string>

#include "scenarios.hpp"

namespace deadbolt::bench {
namespace {

std::string pg_value(PGconn* c, const std::string& sql) {
    PGresult* r = PQexec(c, sql.c_str());
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        std::string why = PQerrorMessage(c);
        PQclear(r);
        throw std::runtime_error("bench: postgres: " + why);
    }
    std::string v = PQgetvalue(r, 0, 0);
    PQclear(r);
    return v;
}

std::string my_value(MYSQL* m, const std::string& sql) {
    if (mysql_real_query(m, sql.data(), sql.size()) != 0)
        throw std::runtime_error(std::string("bench: mariadb: ") + mysql_error(m));
    MYSQL_RES* res = mysql_store_result(m);
    MYSQL_ROW row = res ? mysql_fetch_row(res) : nullptr;
    std::string v = row && row[0] ? row[0] : "";
    if (res) mysql_free_result(res);
    return v;
}

void pg_command(PGconn* c, const std::string& sql) {
    PGresult* r = PQexec(c, sql.c_str());
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) throw std::runtime_error(std::string("bench: postgres: ") + PQerrorMessage(c));
}

// deadbolt's schema (its fence sequence, functions and holders' table), made as deadbolt
// makes it: by connecting once.
void with_schema(const Args& a) {
    if (a.statements) (void)Client::connect(a.url);
}

std::string who() {
    return ", 'bench-host', " + std::to_string(::getpid()) + ", 30000";
}

}  // namespace

int cycle_raw_pg(const Args& a) {
    with_schema(a);
    run_cycles(a, [&](int t, std::vector<double>& lat) {
        PGconn* c = PQconnectdb(a.url.c_str());
        if (PQstatus(c) != CONNECTION_OK)
            throw std::runtime_error(std::string("bench: postgres: ") + PQerrorMessage(c));
        auto key = std::to_string(1'000'000 * (a.id + 1) + t);
        const auto take = a.statements
                              ? "SELECT deadbolt.take1(" + key + ", false, true" + who() + ")"
                              : "SELECT pg_try_advisory_lock(" + key + ")";
        const auto give = a.statements ? "SELECT pg_advisory_unlock(" + key + ")::int"
                                       : "SELECT pg_advisory_unlock(" + key + ")";
        if (a.statements) pg_command(c, "SET idle_session_timeout = 30000");
        while (now_ns() < a.until_ns) {
            auto t0 = now_ns();
            auto took = pg_value(c, take);
            if (took.empty() || took == "f")
                throw std::runtime_error("bench: postgres: the raw lock was refused");
            spend_user_cpu(a.spend_us / 2);
            pg_value(c, give);
            spend_user_cpu(a.spend_us / 2);
            lat.push_back(double(now_ns() - t0) / 1000);
        }
        PQfinish(c);
    });
    return 0;
}

int cycle_raw_my(const Args& a) {
    with_schema(a);
    static const std::regex form(R"(^(mysql|mariadb)://([^:@/]+):([^@/]*)@([^:/]+):(\d+)/(\w+)$)");
    std::smatch m;
    if (!std::regex_match(a.url, m, form))
        throw std::runtime_error("bench: --url must be mysql://user:pw@host:port/db");
    mysql_library_init(0, nullptr, nullptr);
    run_cycles(a, [&](int t, std::vector<double>& lat) {
        MYSQL* db = mysql_init(nullptr);
        if (!mysql_real_connect(db, m[4].str().c_str(), m[2].str().c_str(), m[3].str().c_str(),
                                m[6].str().c_str(), std::stoi(m[5].str()), nullptr, 0))
            throw std::runtime_error(std::string("bench: mariadb: ") + mysql_error(db));
        auto name = "'" + a.key + ":" + std::to_string(a.id) + ":" + std::to_string(t) + "'";
        const auto take =
            a.statements
                ? "REPLACE INTO deadbolt_holders SELECT CONNECTION_ID(), " + name +
                      ", NEXTVAL(deadbolt_fences), 30000, ROUND(UNIX_TIMESTAMP(NOW(6)) * 1000), " +
                      std::to_string(::getpid()) +
                      ", 'bench-host' FROM DUAL WHERE COALESCE(GET_LOCK(" + name +
                      ", 0), 0) = 1 RETURNING fence"
                : "SELECT GET_LOCK(" + name + ", 0)";
        const auto give = a.statements ? "SELECT COALESCE(RELEASE_LOCK(" + name + ") = 1, 0)"
                                       : "SELECT RELEASE_LOCK(" + name + ")";
        if (a.statements) my_value(db, "SET SESSION wait_timeout = 30");
        while (now_ns() < a.until_ns) {
            auto t0 = now_ns();
            auto took = my_value(db, take);
            if (took.empty() || took == "0")
                throw std::runtime_error("bench: mariadb: the raw lock was refused");
            spend_user_cpu(a.spend_us / 2);
            my_value(db, give);
            spend_user_cpu(a.spend_us / 2);
            lat.push_back(double(now_ns() - t0) / 1000);
        }
        mysql_close(db);
    });
    return 0;
}

}  // namespace deadbolt::bench
