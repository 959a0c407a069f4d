#include "deadbolt/client.hpp"
#include "backends/redis/store.hpp"

#include <fmt/format.h>

#include "backends/redis/acl.hpp"
#include "backends/redis/commands.hpp"
#include "backends/redis/keys.hpp"
#include "backends/redis/net/url.hpp"
#include "backends/redis/replies.hpp"
#include "backends/redis/specs.hpp"
#include "backends/redis/topology/redlock.hpp"
#include "backends/redis/topology/redlock_setup.hpp"
#include "core/client_impl.hpp"
#include "core/quorum.hpp"
#include "core/validity.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/fence.hpp"
#include "primitives/take.hpp"

namespace deadbolt {

namespace {

// A named ACL user learns at connect what it lacks (redis/acl.hpp); true when it was checked.
bool check_acl_user(detail::ClientImpl& impl) {
    const auto& o = impl.options;
    if (o.username.empty()) return false;
    detail::check_acl(*redis(impl).server, o.username, o.key_prefix,
                      detail::Clock::now() + o.connect_timeout + o.command_timeout)
        .throw_if_error();
    return true;
}

Client connect_redlock(std::string_view url, const ClientOptions& options) {
    auto parsed = detail::parse_node_list(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    if (parsed.nodes.front().options.sync_replicas > 0)
        throw UsageError(make_error_code(errc::invalid_url),
                         "sync_replicas applies to one primary (redis://, redis-sentinel://); "
                         "Redlock's nodes are independent masters: drop sync_replicas");
    auto impl = detail::redis_client(parsed.nodes.front().options, parsed.nodes, parsed.fencing);
    detail::check_redlock_nodes(*redis(*impl).nodes, parsed.nodes, parsed.allow_fewer,
                                impl->warnings)
        .throw_if_error();
    return Client(std::move(impl));
}

Client connect_sentinel(std::string_view url, const ClientOptions& options) {
    auto parsed = detail::parse_sentinel_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    auto sentinel = std::make_shared<detail::Sentinel>(parsed.sentinels, parsed.master_name);
    std::string host;
    std::uint16_t port = 0;
    sentinel->discover(host, port).throw_if_error();
    detail::Endpoint ep = parsed.master;
    ep.host = host;
    ep.port = port;
    auto impl = detail::redis_client(ep.options, ep);
    Client c(impl);
    detail::Reply info;
    detail::command(*redis(*impl).conn, {"INFO", "replication"}, info,
                    detail::Clock::now() + ep.options.connect_timeout + ep.options.command_timeout)
        .throw_if_error();
    if (!detail::parse_role(info.str).master)
        detail::Status::error(errc::readonly,
                              fmt::format("the sentinels name {} as the primary of '{}', but it "
                                          "is a replica: a failover is under way; try again",
                                          ep.describe(), parsed.master_name))
            .throw_if_error();
    check_acl_user(*impl);
    std::weak_ptr<detail::ClientImpl> weak = impl;
    sentinel->follow(host, port, [weak](const std::string& h, std::uint16_t p) {
        if (auto client = weak.lock()) redis(*client).primary_moved(h, p);
    });
    redis(*impl).sentinel = std::move(sentinel);
    return c;
}

// How often a cluster client re-reads the slot map unasked, so a failover that moved a master
// is noticed (and its leases checked) even when no call meets it.
constexpr std::chrono::seconds kClusterRecheck{1};

Client connect_cluster(std::string_view url, const ClientOptions& options) {
    auto parsed = detail::parse_cluster_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    auto cluster = std::make_shared<detail::Cluster>(parsed.nodes);
    const auto& o = parsed.nodes.front().options;
    cluster->refresh(detail::Clock::now() + o.connect_timeout + o.command_timeout).throw_if_error();
    auto impl = detail::redis_client(parsed.nodes.front().options, parsed.nodes, cluster);
    check_acl_user(*impl);
    // A master's replica took over: its leases are checked there, and those it does not hold
    // (writes replication had not carried yet) are reported lost.
    std::weak_ptr<detail::ClientImpl> weak = impl;
    cluster->watch(kClusterRecheck, [weak] {
        if (auto c = weak.lock(); c && c->store->on_doubt) c->store->on_doubt();
    });
    return Client(std::move(impl));
}

}  // namespace

Client Client::connect(std::string_view url, const ClientOptions& options) {
    if (url.starts_with("redlock://")) return connect_redlock(url, options);
    if (url.starts_with("redis-sentinel://")) return connect_sentinel(url, options);
    if (url.starts_with("redis-cluster://")) return connect_cluster(url, options);
    auto parsed = detail::parse_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    auto impl = detail::redis_client(parsed.endpoint.options, parsed.endpoint);
    Client c(impl);
    if (!check_acl_user(*impl)) c.ping();
    return c;
}

Mutex Client::mutex(std::string_view name, MutexOptions options) const {
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return Mutex(impl_, std::string(name), std::move(options));
}

namespace {

void check_permits(int permits) {
    if (permits < 1)
        throw UsageError(make_error_code(errc::invalid_argument),
                         fmt::format("a semaphore needs at least 1 permit, not {}", permits));
}

}  // namespace

FairMutex Client::fair_mutex(std::string_view name, MutexOptions options) const {
    impl_->store->offers("FairMutex").throw_if_error();
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return FairMutex(impl_, std::string(name), std::move(options));
}

std::unique_ptr<ReentrantMutex> Client::reentrant_mutex(std::string_view name, MutexOptions options,
                                                        std::string_view owner) const {
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    if (owner.size() > kMaxNameBytes)
        throw UsageError(
            make_error_code(errc::invalid_argument),
            fmt::format("owner id is {} bytes, over the limit of {}", owner.size(), kMaxNameBytes));
    return std::make_unique<ReentrantMutex>(impl_, std::string(name), std::move(options),
                                            std::string(owner));
}

std::unique_ptr<RWLock> Client::rwlock(std::string_view name, MutexOptions options) const {
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return std::make_unique<RWLock>(impl_, std::string(name), std::move(options));
}

std::unique_ptr<Semaphore> Client::semaphore(std::string_view name, int permits,
                                             MutexOptions options) const {
    impl_->store->offers("Semaphore").throw_if_error();
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    check_permits(permits);
    return std::make_unique<Semaphore>(impl_, std::string(name), permits, std::move(options));
}

PermitExpirableSemaphore Client::permit_semaphore(std::string_view name, int permits,
                                                  MutexOptions options) const {
    impl_->store->offers("PermitExpirableSemaphore").throw_if_error();
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    check_permits(permits);
    return PermitExpirableSemaphore(impl_, std::string(name), permits, std::move(options));
}

MultiLock Client::multi_lock(std::vector<std::string> names, MutexOptions options) const {
    detail::validate_names(names).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return MultiLock(impl_, std::move(names), std::move(options));
}

Lease Client::acquire_all(const std::vector<std::string>& names, const MutexOptions& options,
                          const AcquireOptions& how) const {
    return detail::take(impl_, detail::multi_spec_of(names, options), how, nullptr);
}

RateLimiter Client::rate_limiter(std::string_view name, RateLimit limit) const {
    impl_->store->offers("RateLimiter").throw_if_error();
    detail::validate_name(name).throw_if_error();
    detail::validate_rate_limit(limit).throw_if_error();
    return RateLimiter(impl_, std::string(name), limit);
}

std::unique_ptr<LeaderElection> Client::election(std::string_view name,
                                                 MutexOptions options) const {
    detail::validate_name(name).throw_if_error();
    detail::validate_options(options).throw_if_error();
    return std::make_unique<LeaderElection>(impl_, std::string(name), std::move(options));
}

Lease Client::campaign(std::string_view name, std::string_view value, const MutexOptions& options,
                       const AcquireOptions& how) const {
    detail::validate_leader_value(value).throw_if_error();
    return detail::take(impl_, detail::leader_spec(name, options, value), how, nullptr);
}

CountDownLatch Client::latch(std::string_view name) const {
    impl_->store->offers("CountDownLatch").throw_if_error();
    detail::validate_name(name).throw_if_error();
    return CountDownLatch(impl_, std::string(name));
}

Lease Client::acquire(std::string_view name, const MutexOptions& options,
                      const AcquireOptions& how) const {
    return detail::take(impl_, detail::spec_of(detail::Shape::exclusive, name, options), how,
                        nullptr);
}

Lease Client::acquire(std::string_view name, const MutexOptions& options, const AcquireOptions& how,
                      std::error_code& ec) const noexcept {
    return detail::without_throwing(ec, [&] {
        return detail::take(impl_, detail::spec_of(detail::Shape::exclusive, name, options), how,
                            &ec);
    });
}

Lease Client::acquire(std::string_view name, LockMode mode, const MutexOptions& options,
                      const AcquireOptions& how) const {
    auto take = [&](detail::Shape shape) {
        return detail::take(impl_, detail::spec_of(shape, name, options), how, nullptr);
    };
    switch (mode) {
        case LockMode::fair:
            return take(detail::Shape::fair);
        case LockMode::shared:
            return take(detail::Shape::read);
        case LockMode::write:
            return take(detail::Shape::write);
        case LockMode::exclusive:
            break;
    }
    return acquire(name, options, how);
}

namespace {

void check_fenced_key(const detail::ClientImpl& impl, std::string_view key) {
    if (key.empty())
        throw UsageError(make_error_code(errc::invalid_argument), "fenced write: empty key");
    // The guarded data lives in one place; Redlock's nodes are independent copies of nothing.
    if (redis(impl).nodes->redlock())
        throw UsageError(make_error_code(errc::invalid_argument),
                         "fenced writes over redlock:// would reach one node of several "
                         "independent ones: keep the fenced data on one server (or a Sentinel "
                         "group or Cluster) and use a Client connected there");
}

}  // namespace

FencedValue Client::fenced_get(std::string_view key) const {
    check_fenced_key(*impl_, key);
    std::string record = detail::fence_record_key(key), version = detail::version_key(key);
    detail::Reply r;
    redis(*impl_)
        .server
        ->eval({&detail::fenced_get_script(), {key, record, version}, {}}, r, impl_->deadline())
        .throw_if_error();
    FencedValue out;
    if (r.type != detail::Reply::Type::array || r.elements.size() != 2 ||
        !detail::to_u64(r.elements[1], out.version))
        throw ServerError(make_error_code(errc::protocol_error), "unexpected fenced_get reply");
    if (!r.elements[0].is_nil()) out.value = r.elements[0].str;
    return out;
}

FencedResult Client::fenced_cas(std::string_view key, std::string_view value, std::uint64_t fence,
                                std::uint64_t version) const {
    return fenced_write(key, value, fence, std::to_string(version));
}

std::string Client::force_unlock(std::string_view name) const {
    detail::validate_name(name).throw_if_error();
    impl_->store->offers("force_unlock").throw_if_error();
    auto keys = detail::every_key_of(impl_->options.key_prefix, name);
    std::string released = detail::aux_key(keys.front(), "released");
    std::string observe = detail::observe_channel(impl_->options.key_prefix, name);
    detail::Reply r;
    redis(*impl_)
        .server
        ->eval({&detail::force_unlock_script(), {keys.begin(), keys.end()}, {released, observe}}, r,
               impl_->deadline())
        .throw_if_error();
    return r.str == "lock" ? "mutex" : r.str;
}

FencedResult Client::fenced_set(std::string_view key, std::string_view value,
                                std::uint64_t fence) const {
    return fenced_write(key, value, fence, "");
}

FencedResult Client::fenced_write(std::string_view key, std::string_view value, std::uint64_t fence,
                                  std::string_view version) const {
    check_fenced_key(*impl_, key);
    if (fence == 0)
        throw UsageError(make_error_code(errc::invalid_argument),
                         "fenced_set: fence 0 is not a token; pass lease.fence()");
    if (fence > kMaxFence)
        throw UsageError(make_error_code(errc::invalid_argument),
                         fmt::format("fenced_set: fence {} is out of range: deadbolt's fences are "
                                     "1..{}; pass lease.fence()",
                                     fence, kMaxFence));
    std::string record = detail::fence_record_key(key), versions = detail::version_key(key);
    std::string f = std::to_string(fence);
    detail::Reply r;
    redis(*impl_)
        .server
        ->eval({&detail::fenced_set_script(), {key, record, versions}, {f, value, version}}, r,
               impl_->deadline())
        .throw_if_error();
    FencedResult out;
    detail::parse_fenced(r, out.accepted, out.highest, out.version).throw_if_error();
    out.stale_fence = !out.accepted && out.highest > fence;
    return out;
}

const std::vector<std::string>& Client::warnings() const noexcept {
    return impl_->warnings;
}

void Client::ping() const {
    if (redis(*impl_).nodes->redlock()) {
        redis(*impl_)
            .nodes->need_majority(redis(*impl_).nodes->command_everywhere({"PING"}), "")
            .throw_if_error();
        return;
    }
    redis(*impl_)
        .server
        ->ping(detail::Clock::now() + impl_->options.connect_timeout +
               impl_->options.command_timeout)
        .throw_if_error();
}

std::string Client::lock_key(std::string_view name) const {
    return impl_->options.key_prefix + std::string(name);
}

}  // namespace deadbolt
