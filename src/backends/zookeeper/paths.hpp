// How deadbolt lays out a lock in ZooKeeper, the way Apache Curator's InterProcessMutex does
// (so Java services share it): a lock named N is the znode /N under the chroot, and its
// contenders are EPHEMERAL_SEQUENTIAL children "_c_<guid>-lock-<seq>"; the lowest sequence
// holds. Kazoo's "<uuid>__lock__<seq>" children count as contenders too. The guid finds our
// own node after a create whose reply was lost. An RWLock's contenders queue in the same line
// as Curator's InterProcessReadWriteLock names them ("-__WRIT__", "-__READ__"); a reader
// waits only for writers (any contender that is no reader) ahead of it. Pure; no I/O.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "deadbolt/client.hpp"

namespace deadbolt::detail {

/// The znode of lock name: "/" + name, each '/'-separated part escaped so that ZooKeeper
/// takes it: '%', control bytes, bytes that are not UTF-8 a Java string keeps, and parts
/// "." and ".." become %XX. Names ZooKeeper already takes keep their text, so Curator's
/// path "/jobs/daily" is deadbolt's name "jobs/daily". "" and why when name has an empty
/// part (a leading, trailing or doubled '/').
std::string znode_of(std::string_view name, std::string& why);
/// The lock name of a znode path (the inverse of znode_of).
std::string name_of_znode(std::string_view path);

/// A semaphore's children, as Curator's InterProcessSemaphoreV2 names them: the gate Mutex's
/// znode and the leases' (one child per permit held or being counted).
inline constexpr std::string_view kGate = "locks";
inline constexpr std::string_view kLeases = "leases";
/// Whether children are a semaphore's (its leases' znode among them).
inline bool is_semaphore(const std::vector<std::string>& children) {
    return std::find(children.begin(), children.end(), kLeases) != children.end();
}

/// A new guid: 36 characters in UUID form, random.
std::string new_guid();
/// What a contender queues for: Curator's InterProcessMutex ("-lock-"), its
/// InterProcessReadWriteLock's writer ("-__WRIT__") or reader ("-__READ__"), its
/// LeaderLatch ("-latch-"), or a lease of its InterProcessSemaphoreV2 ("-lease-").
enum class Queues : unsigned char { lock, write, read, latch, lease };
/// The name our contender is created with (ZooKeeper appends the sequence):
/// "_c_" + guid + "-lock-" (or "-__WRIT__", "-__READ__").
std::string contender_prefix(std::string_view guid, Queues as = Queues::lock);

/// A contender child: its name and its sequence.
struct Contender {
    std::string name;
    std::int64_t seq = 0;
};
/// The sequence of a contender child (Curator's "...-lock-<seq>", Kazoo's "...__lock__<seq>");
/// nullopt for a child that is no contender.
std::optional<std::int64_t> contender_seq(std::string_view child);
/// The contenders among children, in line (lowest sequence first).
std::vector<Contender> in_line(const std::vector<std::string>& children);
/// Whether a contender shares with readers: Curator's "__READ__", Kazoo's "__rlock__".
bool is_reader(std::string_view child);
/// The position in line of the child created with guid; nullopt when none is.
std::optional<std::size_t> find_own(const std::vector<Contender>& line, std::string_view guid);
/// Whether a contender is a LeaderLatch candidate ("-latch-"): its data is what it proclaims.
bool is_candidate(std::string_view child);
/// The tool whose layout a contender child's name has: "Kazoo" for Kazoo's
/// "<uuid>__lock__<seq>" and "__rlock__", else "Curator" (whose layout deadbolt shares).
std::string_view layout_of(std::string_view child);

/// The data deadbolt writes into the node of a lock's holder or a permit's lease: its token
/// (which names its host and process, and is a permit's id), then the timeout of the session
/// it lives on, "<token> session_timeout=<ms>ms", so that any client can tell how long a
/// crash of the holder keeps it. Curator and Kazoo take a lock node's data as opaque (Curator
/// writes the client's address there).
std::string holder_data(std::string_view token, std::chrono::milliseconds session_timeout);
/// What holder_data wrote.
struct HolderData {
    std::string_view token;                        // the whole data when it has no session timeout
    std::chrono::milliseconds session_timeout{0};  // 0: none written (another tool's data)
};
/// The token and session timeout of a node's data (a view into data).
HolderData parse_holder_data(std::string_view data);

/// Who holds through a contender child whose data is data, as `status` tells it.
struct NodeHolder {
    Holder who;                                    // its ttl is -1 ms: it ends with its session
    std::chrono::milliseconds session_timeout{0};  // its session's, when its data says; else 0
};
/// deadbolt's holder: its host and process (from its token, or a reentrant owner's) and its
/// session's timeout; another tool's: the tool its name's layout says (Holder::client). A
/// reentrant node whose owner id is no token has neither.
NodeHolder holder_of(std::string_view child, std::string_view data);

}  // namespace deadbolt::detail
