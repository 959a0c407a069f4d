// What a client can see of locks without holding them: status of one name, list of many.
#include "core/client_impl.hpp"
#include "core/validity.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt {
namespace {

// Names per status round when listing: bounded replies, bounded time per round trip.
constexpr std::size_t kStatusBatch = 256;

// Held by something deadbolt recognises as its own: plain strings and numbers another tool
// wrote (a redis-py lock, any counter) look like a Mutex and a latch.
bool deadbolt_wrote(const LockStatus& s) {
    if (s.kind == "latch") return false;
    if (s.kind != "mutex") return true;
    return !s.held_by.empty() && !s.held_by.front().host.empty();
}

}  // namespace

LockStatus Client::status(std::string_view name) const {
    detail::validate_name(name).throw_if_error();
    std::vector<std::pair<LockStatus, detail::Status>> found;
    impl_->offered(&detail::Store::admin).statuses({std::string(name)}, found).throw_if_error();
    found.front().second.throw_if_error();
    return std::move(found.front().first);
}

std::vector<ListedLock> Client::list(std::string_view pattern, bool include_foreign) const {
    if (pattern.empty())
        throw UsageError(make_error_code(errc::invalid_argument),
                         "list: empty pattern; \"*\" lists every lock");
    std::vector<std::string> names;
    impl_->offered(&detail::Store::admin).lock_names(pattern, names).throw_if_error();
    std::vector<ListedLock> out;
    for (std::size_t at = 0; at < names.size(); at += kStatusBatch) {
        std::vector<std::string> batch(
            names.begin() + static_cast<std::ptrdiff_t>(at),
            names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), at + kStatusBatch)));
        std::vector<std::pair<LockStatus, detail::Status>> found;
        impl_->offered(&detail::Store::admin).statuses(batch, found).throw_if_error();
        for (std::size_t i = 0; i < batch.size(); ++i) {
            auto& [s, st] = found[i];
            if (st.ec == make_error_code(errc::wrong_type)) continue;  // not a lock
            st.throw_if_error();
            if (s.held && (include_foreign || deadbolt_wrote(s)))
                out.push_back({std::move(batch[i]), std::move(s)});
        }
    }
    return out;
}

}  // namespace deadbolt
