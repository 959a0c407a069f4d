// What a memory holding is: the token a claim's grant (or waiter) holds under its names.
#pragma once

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
};

}  // namespace deadbolt::detail
