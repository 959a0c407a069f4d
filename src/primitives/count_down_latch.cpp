#include "deadbolt/count_down_latch.hpp"

#include <fmt/format.h>

#include "core/client_impl.hpp"
#include "core/validity.hpp"
#include "deadbolt/acquire_options.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt {

CountDownLatch::CountDownLatch(std::shared_ptr<detail::ClientImpl> client, std::string name)
    : client_(std::move(client)), name_(std::move(name)) {}

bool CountDownLatch::try_set_count(std::int64_t count, std::chrono::milliseconds ttl) const {
    if (count < 1)
        throw UsageError(make_error_code(errc::invalid_argument),
                         fmt::format("latch count must be at least 1, not {}", count));
    detail::validate_ttl(ttl, "latch ttl").throw_if_error();
    bool set = false;
    client_->offered(&detail::Store::latches).latch_set(name_, count, ttl, set).throw_if_error();
    return set;
}

bool CountDownLatch::count_down() const {
    bool opened = false;
    client_->offered(&detail::Store::latches).latch_count_down(name_, opened).throw_if_error();
    return opened;
}

std::int64_t CountDownLatch::count() const {
    std::int64_t n = 0;
    client_->offered(&detail::Store::latches).latch_count(name_, n).throw_if_error();
    return n;
}

bool CountDownLatch::wait_until_impl(std::optional<clock::time_point> deadline,
                                     const std::stop_token& cancel) const {
    AcquireOptions how;
    how.deadline = deadline;
    how.cancel = cancel;
    return client_->offered(&detail::Store::latches).latch_wait(name_, how);
}

}  // namespace deadbolt
