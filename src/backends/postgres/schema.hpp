// What deadbolt keeps in a PostgreSQL database besides its advisory locks, all in one schema
// (deadbolt unless the URL names another): the fence sequence, the names of the locks it has
// taken (for status and list: a key cannot be turned back into its name), the fenced values,
// and two functions. Made on first use by anyone allowed to create the schema; never needs
// a superuser.
#pragma once

#include <string>

#include "backends/postgres/conn.hpp"

namespace deadbolt::detail {

/// Makes schema and its objects unless they are there already; fails naming the right that
/// is missing and the GRANTs that give it (to make the schema, or to use it once made), or a
/// server older than PostgreSQL 14.
Status ensure_schema(PgConn& c, const std::string& schema, Clock::time_point by);

/// What to tell user, refused by schema's objects once the schema exists: that it may not use
/// them, and the GRANTs its owner runs.
std::string used_by_others(const std::string& schema, const std::string& user);

}  // namespace deadbolt::detail
