// What a memcached holding is: the lock items it wrote (one, a MultiLock's, or a semaphore's
// slot) with what it wrote there, and the CAS each server gave them, so that a release is a
// compare-and-delete (`md <key> C<cas>`) that never deletes another's lock.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/store.hpp"

namespace deadbolt::detail {

/// Lock keys, shared by the holdings of one claim (a grant does not copy them).
using McKeyList = std::shared_ptr<const std::vector<std::string>>;

struct McHolding final : Holding {
    McHolding(McKeyList k, std::string v, std::string o, std::size_t nodes)
        : shared_keys(std::move(k)),
          keys(*shared_keys),
          value(std::move(v)),
          owner(std::move(o)),
          many_(keys.size() * nodes > 1 ? keys.size() * nodes : 0, 0) {}

    const McKeyList shared_keys;
    const std::vector<std::string>& keys;  // raw lock keys, in a MultiLock's order
    const std::string value;               // what the grant wrote (its token)
    const std::string owner;               // a reentrant holding's owner (value then varies)

    /// The CAS server node gave key k last (0: unknown, the item is found by its value).
    std::uint64_t cas(std::size_t node, std::size_t k) const {
        std::lock_guard lock(m_);
        return cas_at(node, k);
    }
    void set_cas(std::size_t node, std::size_t k, std::uint64_t c) const {
        std::lock_guard lock(m_);
        cas_at(node, k) = c;
    }
    /// A reentrant holding's fence (0: none known): its release, extend and check touch only
    /// the owner's value with this fence. The owner is the same from one holding to the next,
    /// so a release answered too late and sent again must not take the owner's next holding,
    /// which carries a new fence.
    std::uint64_t fence() const {
        std::lock_guard lock(m_);
        return fence_;
    }
    void set_fence(std::uint64_t f) const {
        std::lock_guard lock(m_);
        fence_ = f;
    }

  private:
    // One key on one server, the usual holding, keeps its CAS in place: the list was an
    // allocation per acquisition.
    std::uint64_t& cas_at(std::size_t node, std::size_t k) const {
        return many_.empty() ? one_ : many_[node * keys.size() + k];
    }

    mutable std::mutex m_;
    mutable std::uint64_t one_ = 0;
    mutable std::vector<std::uint64_t> many_;
    mutable std::uint64_t fence_ = 0;
};

/// A reentrant holding's text: "<fence> <holds> <owner>".
std::string mc_reentrant_value(std::uint64_t fence, std::int64_t holds, std::string_view owner);
struct McReentrant {
    std::uint64_t fence = 0;
    std::int64_t holds = 0;
    std::string owner;
};
/// The parts of a reentrant holding's text; nullopt when it is none.
std::optional<McReentrant> mc_parse_reentrant(std::string_view value);

}  // namespace deadbolt::detail
