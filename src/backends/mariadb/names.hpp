// How deadbolt names a lock to MariaDB's GET_LOCK, whose names are at most 64 characters and
// compared without case, and the keys of the rows it keeps there. Pure.
#pragma once

#include <string>
#include <string_view>

namespace deadbolt::detail {

/// The GET_LOCK name of a lock name: the name itself when it is 1 to 64 characters of
/// lowercase ASCII letters, digits and "-_.:/@#" and does not start with "deadbolt:" (so that
/// `SELECT GET_LOCK('orders:42', 10)` shares deadbolt's lock); else "deadbolt:" and the first
/// 55 hex digits of SHA-256(name), so that names differing in case, longer names and binary
/// names never collide.
std::string get_lock_name(std::string_view name);

/// A binary string literal holding bytes exactly: X'...'.
std::string hex_literal(std::string_view bytes);

/// The SQL expression of SHA-256(bytes) as BINARY(32): the primary key of the rows deadbolt
/// keeps per key or name (fenced values, rate limiters' buckets), of any length and bytes.
std::string hash_expression(std::string_view bytes);

/// A string literal of a GET_LOCK name (which holds no quote or backslash).
std::string quoted(std::string_view lock_name);

}  // namespace deadbolt::detail
