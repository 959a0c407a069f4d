// How deadbolt names a lock to PostgreSQL: the 64-bit advisory lock key of a lock name, and
// SQL literals for the values it formats into statements. Pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::detail {

/// The advisory lock key of name: the first 8 bytes of SHA-256("deadbolt:" + name), read as a
/// big-endian signed 64-bit integer. In SQL: schema.key(name), or
/// ('x' || left(encode(sha256(convert_to('deadbolt:' || name, 'UTF8')), 'hex'),
/// 16))::bit(64)::bigint. pg_locks shows it as classid (its high 32 bits) and objid (its low 32
/// bits), objsubid 1.
std::int64_t advisory_key(std::string_view name);

/// The keys of names, sorted and without repeats: the order a MultiLock takes them in, so
/// that two MultiLocks never wait for each other.
std::vector<std::int64_t> sorted_keys(std::span<const std::string> names);

/// A bytea literal holding bytes exactly: '\x...'::bytea.
std::string bytea_literal(std::string_view bytes);

/// Decodes a bytea value as PostgreSQL prints it ("\x" then hex); "" when malformed.
std::string bytea_value(std::string_view text);

}  // namespace deadbolt::detail
