// How deadbolt lays out a lock in etcd, the way etcd's own concurrency.Mutex does (so that
// `etcdctl lock` and Go services share it): contenders are keys <name>/<lease id in hex>,
// and the one with the lowest create revision holds. Pure; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace deadbolt::detail {

/// The directory of name's contenders: prefix + name + "/".
std::string lock_dir(std::string_view prefix, std::string_view name);
/// A contender's key: dir + the lease id in lowercase hex (as concurrency.Mutex writes it).
std::string contender_key(std::string_view dir, std::int64_t lease);
/// The end of the range of every key under dir (etcd's prefix range end).
std::string range_end(std::string_view dir);
/// Whether key is a contender right under dir (not a key of a longer name "dir/x/...").
bool is_contender(std::string_view dir, std::string_view key);

}  // namespace deadbolt::detail
