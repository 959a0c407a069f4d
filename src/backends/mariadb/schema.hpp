// What deadbolt keeps in a MariaDB database besides its GET_LOCKs, all in the URL's database:
// the fence sequence (deadbolt_fences), the names of the locks in use for list
// (deadbolt_names, pruned of names nothing used for a while), fenced values
// (deadbolt_fenced), rate limiters' buckets (deadbolt_buckets), and who holds what
// (deadbolt_holders, a MEMORY table: one row per holding session, gone at a restart with the
// locks it describes). Made on first use by a user who may; others are told what to GRANT.
#pragma once

#include <string>

#include "backends/mariadb/url.hpp"
#include "backends/sql/session.hpp"

namespace deadbolt::detail {

/// What user needs on database db, as the GRANT statements to run (as one who may make the
/// tables, or once they exist).
std::string my_grants(const std::string& db, const std::string& user);

/// Makes what is missing of deadbolt's tables in the session's database (or brings an older
/// layout up to date), checking in one round trip that this user may read them; fails naming
/// the right that is missing and the GRANTs that give it, whether the tables exist
/// (`deadbolt init`) or not.
Status ensure_my_schema(SqlSession& s, const MyUrl& url, Clock::time_point by);

}  // namespace deadbolt::detail
