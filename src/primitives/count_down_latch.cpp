#include "deadbolt/count_down_latch.hpp"
#include "backends/redis/store.hpp"

#include <fmt/format.h>

#include "backends/redis/commands.hpp"
#include "backends/redis/keys.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/waker.hpp"
#include "core/client_impl.hpp"
#include "core/validity.hpp"
#include "deadbolt/acquire_options.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt {
namespace {

// Without opening messages (a cluster's message node down): look again this often.
constexpr std::chrono::milliseconds kUnarmedRecheck{1000};

std::string key_of(const detail::ClientImpl& c, const std::string& name) {
    return c.options.key_prefix + name;
}

}  // namespace

CountDownLatch::CountDownLatch(std::shared_ptr<detail::ClientImpl> client, std::string name)
    : client_(std::move(client)), name_(std::move(name)) {}

bool CountDownLatch::try_set_count(std::int64_t count, std::chrono::milliseconds ttl) const {
    if (count < 1)
        throw UsageError(make_error_code(errc::invalid_argument),
                         fmt::format("latch count must be at least 1, not {}", count));
    detail::validate_ttl(ttl, "latch ttl").throw_if_error();
    std::string n = std::to_string(count), px = std::to_string(ttl.count());
    detail::Reply r;
    redis(*client_)
        .server
        ->eval({&detail::latch_set_script(), {key_of(*client_, name_)}, {n, px}}, r,
               client_->deadline())
        .throw_if_error();
    return r.integer == 1;
}

bool CountDownLatch::count_down() const {
    std::string key = key_of(*client_, name_);
    std::string channel = detail::aux_key(key, "opened");
    detail::Reply r;
    redis(*client_)
        .server
        ->eval({&detail::latch_count_down_script(), {key}, {channel}}, r, client_->deadline())
        .throw_if_error();
    return r.type == detail::Reply::Type::array && r.elements.size() == 2 &&
           r.elements[1].integer == 1;
}

std::int64_t CountDownLatch::count() const {
    detail::Reply r;
    auto key = key_of(*client_, name_);
    redis(*client_).server->command(key, {"GET", key}, r, client_->deadline()).throw_if_error();
    std::uint64_t n = 0;
    if (r.is_nil()) return 0;
    if (!detail::to_u64(r, n))
        throw ServerError(make_error_code(errc::wrong_type),
                          "latch '" + name_ + "' holds something that is not a count");
    return static_cast<std::int64_t>(n);
}

bool CountDownLatch::wait_until_impl(std::optional<clock::time_point> deadline,
                                     const std::stop_token& cancel) const {
    auto& c = *client_;
    std::string key = key_of(c, name_);
    // An expiring latch opens without a message: the watch wakes at its expiry too.
    auto look = [&](detail::Look& found) {
        std::vector<detail::Reply> r;
        auto st = redis(c).server->pipeline(key, {{"EXISTS", key}, {"PTTL", key}}, r, c.deadline());
        if (st.ok()) {
            found.done = r[0].integer == 0;
            found.ttl = std::chrono::milliseconds(r[1].integer < 0 ? -1 : r[1].integer);
        }
        return st;
    };
    AcquireOptions how;
    how.deadline = deadline;
    how.cancel = cancel;
    return detail::watch_channels(c, {detail::aux_key(key, "opened")}, look, how, kUnarmedRecheck);
}

}  // namespace deadbolt
