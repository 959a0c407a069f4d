// MultiLock is a Mutex whose spec names several keys (specs.cpp: multi_spec); the all-or-none
// rule lives in its script (redis/lua/multi.cpp).
#include "deadbolt/multi_lock.hpp"

#include <mutex>

namespace deadbolt {

static_assert(std::is_move_constructible_v<MultiLock>);

MultiLock::MultiLock(std::shared_ptr<detail::ClientImpl> client, std::vector<std::string> names,
                     MutexOptions options)
    : Mutex(std::move(client), std::move(names), std::move(options)) {}

}  // namespace deadbolt
