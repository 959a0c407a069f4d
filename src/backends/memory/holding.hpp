// What a memory holding is: the token a claim's grant (or waiter) holds under its names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/lock_spec.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

struct MemHolding final : Holding {
    std::vector<std::string> keys;  // the names as the space keeps them (with the prefix)
    std::string token;
    Shape shape = Shape::exclusive;
    bool waiter = false;  // a FairMutex's place in line or an RWLock writer's claim
    // A reentrant holding's fence: its release takes a hold off only where the owner's hold
    // carries it (the owner is the same from one holding to the next, and a release answered
    // too late and sent again must not take the next one). 0: any.
    std::uint64_t fence = 0;
};

}  // namespace deadbolt::detail
