// LockSpec: what a primitive wants, in the language of locks. A store turns it into its
// engine's keys, scripts, nodes or sessions; the core never looks further.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "deadbolt/options.hpp"

namespace deadbolt::detail {

enum class Shape : unsigned char {
    exclusive,  // Mutex
    fair,       // FairMutex: first come, first served
    write,      // RWLock's writer: excludes readers too
    read,       // RWLock's reader: shares with readers
    reentrant,  // ReentrantMutex: an owner may take it again
    permits,    // Semaphore, PermitExpirableSemaphore: at most `permits` holders
    multi,      // MultiLock: every name or none
    leader,     // LeaderElection's campaign: the term is held like a lock
};

/// What events and messages call a shape (LockEvent::primitive).
const char* primitive_of(Shape s);

/// How a MultiLock's lease is named in messages: its first name and how many more.
std::string multi_display_name(const std::vector<std::string>& names);

struct LockSpec {
    Shape shape = Shape::exclusive;
    std::string name;                // messages and Lease::name(); a MultiLock's display name
    std::vector<std::string> names;  // multi: the names, in the order of their fences
    MutexOptions options;            // ttl, renewal, lock_delay, jitter, on_lost, ...
    int permits = 0;                 // permits: how many may hold at once
    std::string owner;               // reentrant: the owner id (a fixed token)
    bool reentry = false;            // reentrant: the caller holds it already
    bool leftover_is_new = false;    // reentrant: a holding of owner's found is not ours now
    bool owner_only_here = false;    // reentrant: the client's default owner, no other client's
    std::string value;               // leader: the campaign's value
};

/// A spec of shape for one name.
inline LockSpec spec_of(Shape shape, std::string_view name, const MutexOptions& o) {
    LockSpec s;
    s.shape = shape;
    s.name = std::string(name);
    s.options = o;
    return s;
}
/// At most permits holders of name.
inline LockSpec permits_spec(std::string_view name, const MutexOptions& o, int permits) {
    LockSpec s = spec_of(Shape::permits, name, o);
    s.permits = permits;
    return s;
}
/// Every one of names or none.
inline LockSpec multi_spec_of(const std::vector<std::string>& names, const MutexOptions& o) {
    LockSpec s = spec_of(Shape::multi, multi_display_name(names), o);
    s.names = names;
    return s;
}
/// A campaign for name's election with value.
inline LockSpec leader_spec(std::string_view name, const MutexOptions& o, std::string_view value) {
    LockSpec s = spec_of(Shape::leader, name, o);
    s.value = std::string(value);
    return s;
}

}  // namespace deadbolt::detail
