#include "deadbolt/leader_election.hpp"

#include <fmt/format.h>

#include "client_access.hpp"
#include "core/client_impl.hpp"
#include "core/validity.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt {

LeaderElection::LeaderElection(std::shared_ptr<detail::ClientImpl> client, std::string name,
                               MutexOptions options)
    : client_(std::move(client)), name_(std::move(name)), options_(std::move(options)) {}

LeaderElection::~LeaderElection() {
    resign();
}

LeaderElection::LeaderElection(LeaderElection&& other) noexcept
    : client_(std::move(other.client_)),
      name_(std::move(other.name_)),
      options_(std::move(other.options_)) {
    std::lock_guard lk(other.m_);
    term_.swap(other.term_);
}

Lease& LeaderElection::campaign(std::string_view value, const AcquireOptions& how) {
    if (leading())
        throw UsageError(
            make_error_code(errc::invalid_argument),
            fmt::format("election '{}': this handle leads already; resign first", name_));
    Lease l = detail::ClientAccess::make(client_).campaign(name_, value, options_, how);
    std::lock_guard lk(m_);
    return term_.emplace(std::move(l));
}

void LeaderElection::proclaim(std::string_view value) {
    detail::validate_leader_value(value).throw_if_error();
    std::string token;
    {
        std::lock_guard lk(m_);
        if (!term_)
            throw LockError(make_error_code(errc::not_owner),
                            fmt::format("election '{}': cannot proclaim, not the leader", name_));
        token = term_->token();
    }
    bool ours = false;
    client_->offered(&detail::Store::elections)
        .proclaim(name_, token, value, ours)
        .throw_if_error();
    if (!ours)
        throw LockError(make_error_code(errc::not_owner),
                        fmt::format("election '{}': cannot proclaim, the term ended (expired or "
                                    "taken over)",
                                    name_));
}

void LeaderElection::resign() noexcept {
    std::optional<Lease> l;
    {
        std::lock_guard lk(m_);
        l.swap(term_);
    }
    // The Lease's destructor resigns and reports a failure through on_lost; never throws.
}

Lease& LeaderElection::term() {
    std::lock_guard lk(m_);
    if (!term_)
        throw LockError(make_error_code(errc::not_owner),
                        fmt::format("election '{}': this handle does not lead", name_));
    return *term_;
}

bool LeaderElection::leading() const noexcept {
    std::lock_guard lk(m_);
    return term_.has_value();
}

Leader LeaderElection::leader() const {
    Leader out;
    client_->offered(&detail::Store::elections).leader(name_, out).throw_if_error();
    return out;
}

Leader LeaderElection::observe(const Leader& seen, const AcquireOptions& how) const {
    return client_->offered(&detail::Store::elections).observe(name_, seen, how);
}

}  // namespace deadbolt
