// Scripts: the Lua run by the server, one per lock operation, and their SHA1 for EVALSHA.
// Keys always travel in KEYS and values in ARGV: no Lua source is ever built from user data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::detail {

struct Script {
    std::string_view name;
    std::string source;
    std::string sha1;  // hex, computed once from source
    /// -1, or k >= 0 when the script treats each KEYS[i] on its own (a MultiLock's lease
    /// operations): ARGV is k common values, then one per key if present, and it answers 0
    /// when any key is not ours, else 1 + a count. Such a call whose keys live in several
    /// cluster slots runs as one part per slot (see slot_split.hpp).
    int per_key_after = -1;
};

/// A script named name with source as its Lua (per_key_after: see Script).
Script make_script(std::string_view name, std::string source, int per_key_after = -1);
/// The Redis commands source calls (redis.call / redis.pcall), upper case, sorted, unique.
std::vector<std::string> script_commands(std::string_view source);
/// body preceded by the Lua helpers shared by several scripts: now_ms(), next_fence(last,
/// fence_key, fence_px) and extend_to(key, px) (see scripts.cpp), kind_of (with_kinds) and
/// the waiters' line (with_line).
std::string with_helpers(std::string_view body);
/// body preceded by the waiters' line (lua/line.cpp): wake(line, box) wakes the first waiter
/// whose client listens and has the next stand by (1 if it woke one); line_up(line, member,
/// ticket, pttl) and leave_line(line, member, ticket, box) for acquire scripts; told(member,
/// word, box) tells one waiter's client.
std::string with_line(std::string_view body);
/// The Lua of with_line.
std::string_view line_lua();
/// body preceded by kind_of(key) (what holds a lock key, in words, or nil) and
/// refuse(key, found, want) (the error for a name held by another kind); with_helpers has them.
std::string with_kinds(std::string_view body);

/// How one kind of holding is renewed, released and checked on the server. Each script takes
/// KEYS = the lease's op_keys and ARGV = {token, box, px, op_args...}. The box names the lock
/// to the waiters a release wakes (their mailbox, Subscriber::mailbox): the name's release
/// channel, which nobody subscribes to on the server any more.
struct LeaseKind {
    const Script* extend;   ///< 1 = expiry moved to px from now (or later); 0 = not ours.
    const Script* release;  ///< 0 = not ours; n >= 1: released and n - 1 waiters woken.
    const Script* check;    ///< 1 = still ours.
    bool yield_after_release = false;  ///< The releaser yields to the woken waiter (handoff_grace).
    /// How Redlock's fence round recognises the holding: "token" (a string key holding the
    /// token), "owner" (a reentrant hash field) or "leader" (an election hash's leader).
    std::string_view held_as = "token";
    /// What a failed Redlock attempt of a fixed owner gives back with (its token cannot
    /// change, so a late release must not take the owner's next grant): the release, but only
    /// of a holding whose fence is at most the last ARGV. Null: the kind's release.
    const Script* give_back = nullptr;
};

// Acquire scripts all take ARGV = {token, px, fence_px, args...} and return {1, fence} when
// granted (fence 0 for shared holdings) or {0, ms} when worth retrying in ms (-1 = no expiry).
// Every kind but FairMutex waits in the name's line (KEYS ends with it, or with one line per
// name); its args end with the box (one per name), then member (empty: the caller does not
// listen yet, so it does not line up) and ticket (empty until it lined up): a refusal that
// lined up answers {0, ms, ticket}.

/// Mutex: SET NX PX + fencing. KEYS: lock, fence, line. ARGV after the common three: box,
/// member, ticket.
const Script& acquire_script();
/// Mutex over Redlock with fencing=0: SET NX PX alone, granted with fence 0. KEYS and ARGV
/// as acquire_script.
const Script& unfenced_acquire_script();
/// Mutex: compare-and-delete, waking the next in line. KEYS: lock, line. Returns 1 + waiters
/// woken, or 0.
const Script& release_script();
/// A waiter giving up leaves the lines it stood in (op convention; see lua/line.cpp).
const Script& leave_line_script();
/// Redlock round 2: if every lock of KEYS (lock1, fence1, lock2, fence2, ...) is still held by
/// ARGV[1] (token) in the way ARGV[3] names (LeaseKind::held_as), raise each fence counter to at
/// least its fence (ARGV[5...]), expiring in ARGV[2] ms, and publish "elected" on ARGV[4]
/// unless empty; 1 if it did, 0 (nothing written) if any lock is not ours.
const Script& raise_fence_script();
/// The plain string-key lock (Mutex, FairMutex after its grant, RWLock writer). op_keys:
/// lock, line.
const LeaseKind& mutex_kind();

/// ReentrantMutex: a hash {owner: count, "": fence}. KEYS: lock, fence, line. ARGV after the
/// common three: "again" | "fresh", box, member, ticket.
const Script& reentrant_acquire_script();
/// op_keys: lock, line.
const LeaseKind& reentrant_kind();

/// FairMutex: KEYS lock, fence, queue (list), alive (zset of waiter deadlines). ARGV after
/// the common three: waiter_ttl, grant channel prefix. Its waiters queue, not line up.
const Script& fair_acquire_script();
/// Hands the lock to the next live waiter (or deletes it, waking the next in the name's line);
/// when not the holder, leaves the queue instead (a waiter giving up). op_keys: lock, fence,
/// queue, alive, line; op_args: waiter_ttl, fence_px, grant channel prefix.
const LeaseKind& fair_kind();

/// RWLock: KEYS lock (writer), fence, readers (zset token -> expiry), claim (a waiting
/// writer), line. ARGV after the common three: box, member, ticket.
const Script& read_acquire_script();
/// ARGV after the common three: waiter_ttl, box, member, ticket.
const Script& write_acquire_script();
/// A writer that gives up drops its claim (waking the next in line, whom it held back) and
/// leaves the line. Op convention; KEYS: claim, lock, line; op_args: member.
const Script& write_abandon_script();

/// Holders kept in a zset of token -> server expiry (RWLock readers, semaphore permits).
/// op_keys: zset, line, companions sharing its expiry. op_args: "each" (wake the next in line
/// at every release) or "last" (only when the last holder leaves).
const LeaseKind& zset_holder_kind();
/// KEYS: zset. Returns how many holders have not expired.
const Script& zset_live_count_script();

/// Semaphore: KEYS permits (zset), limit, line. ARGV after the common three: permits, box,
/// member, ticket.
const Script& semaphore_acquire_script();

/// MultiLock: KEYS lock1, fence1, lock2, fence2, ..., then line1, line2, ...; all taken or
/// none. ARGV after the common three: box1, box2, ..., member, ticket. Replies
/// {1, fence1, fence2, ...} or {0, pttl of a held one, ticket}.
const Script& multi_acquire_script();
/// op_keys: lock1, line1, lock2, line2, ...; op_args: each key's box (a lock's and its line's
/// are its name's).
const LeaseKind& multi_kind();

/// LeaderElection: KEYS election (hash {leader, value, term}), fence, line. ARGV after the
/// common three: value, observe channel, box, member, ticket.
const Script& campaign_script();
/// The leader's term; op_keys: election, line; op_args: the observe channel (resign
/// publishes there too).
const LeaseKind& leader_kind();
/// KEYS: election. ARGV: token, value, observe channel. 1 = done, 0 = not the leader.
const Script& proclaim_script();
/// KEYS: election. Returns {value, term, pttl}, or {} when nobody leads.
const Script& leader_read_script();

/// CountDownLatch. KEYS: count. ARGV: count, px. Returns 1 if set, 0 if it existed.
const Script& latch_set_script();
/// KEYS: count. ARGV: channel. Returns {remaining, opened_now}; remaining -1 = not set.
const Script& latch_count_down_script();

/// KEYS: main, fence, queue, readers, claim, limit, line. Returns {kind, pttl, last fence or
/// false, holders, waiters, permits, writer waiting 0/1}; see LockStatus.
const Script& status_script();
/// KEYS as status_script; ARGV: box, observe channel, notices channel, name. Returns what it
/// freed ('lock', 'readers', 'reentrant', 'leader', 'semaphore') or 'free'; it names the
/// name on the notices channel (its holders check at once) and wakes the next in line.
const Script& force_unlock_script();

/// Write if fence >= highest seen and (unless ARGV[3] is empty) the version is still ARGV[3].
/// KEYS: data, record, version. ARGV: fence, value, expected version or "".
/// Returns {1, fence, new version} or {0, highest, version}.
const Script& fenced_set_script();
/// KEYS: data, record, version. Returns {value or nil, version}.
const Script& fenced_get_script();
/// RateLimiter token bucket. KEYS: bucket. ARGV: rate, per_ms, burst, n (0 = look only).
/// Returns {allowed 0/1, ms until n tokens, whole tokens left}.
const Script& rate_take_script();

/// Hex SHA1 of data (what Redis uses to name a script).
std::string sha1_hex(std::string_view data);

/// Appends EVALSHA sha numkeys keys... args... to out.
void encode_evalsha(std::string& out, const Script& s, const std::vector<std::string_view>& keys,
                    const std::vector<std::string_view>& args);
/// Appends EVAL source numkeys keys... args... to out (after NOSCRIPT).
void encode_eval(std::string& out, const Script& s, const std::vector<std::string_view>& keys,
                 const std::vector<std::string_view>& args);
/// The EVAL of one encode_evalsha request of s (the same keys and arguments), from its bytes:
/// what a NOSCRIPT reply asks for, without keeping a copy of every key and argument for it.
/// Returns an empty string when evalsha is not such a request.
std::string eval_of_evalsha(std::string_view evalsha, const Script& s);

}  // namespace deadbolt::detail
