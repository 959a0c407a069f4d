// How deadbolt lays out a lock in etcd, the way etcd's own concurrency.Mutex does (so that
// `etcdctl lock` and Go services share it): contenders are keys <name>/<lease id in hex>,
// and the one with the lowest create revision holds. An RWLock's readers queue among them as
// <name>/read-<lease id in hex>; every other contender excludes them (a writer is a Mutex's
// contender, so `etcdctl lock` and deadbolt's readers exclude each other). A ReentrantMutex's
// contender carries "<holds> <owner>" as its value: every client of that owner holds through
// that one key, and the last release deletes it. Pure; no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/reentrant_value.hpp"  // a reentrant contender's value

namespace deadbolt::detail {

/// The directory of name's contenders: prefix + name + "/".
std::string lock_dir(std::string_view prefix, std::string_view name);
/// A contender's key: dir + the lease id in lowercase hex (as concurrency.Mutex writes it).
std::string contender_key(std::string_view dir, std::int64_t lease);
/// A reader's key: dir + "read-" + the lease id in lowercase hex.
std::string reader_key(std::string_view dir, std::int64_t lease);
/// The end of the range of every key under dir (etcd's prefix range end).
std::string range_end(std::string_view dir);
/// Whether key is a contender right under dir (not a key of a longer name "dir/x/...").
bool is_contender(std::string_view dir, std::string_view key);
/// Whether contender key (right under dir) is a reader's: readers share with readers.
bool is_reader(std::string_view dir, std::string_view key);

}  // namespace deadbolt::detail
