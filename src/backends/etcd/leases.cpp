#include "backends/etcd/leases.hpp"

#include <fmt/format.h>

namespace deadbolt::detail {
namespace {

// How often the ticker looks for leases due a keepalive.
constexpr std::chrono::milliseconds kTick{100};

}  // namespace

Leases::Leases(std::shared_ptr<EtcdChannel> ch, std::function<void()> on_gone)
    : ch_(std::move(ch)), on_gone_(std::move(on_gone)) {
    auto* stub = &ch_->lease();
    stream_ = std::make_unique<KeepStream>(
        ch_, [stub](grpc::ClientContext& ctx) { return stub->LeaseKeepAlive(&ctx); },
        [this](const etcdserverpb::LeaseKeepAliveResponse& r) { answered(r); },
        [this] { broken(); });
    ticker_ = std::thread([this] { tick_loop(); });
}

Leases::~Leases() {
    {
        std::lock_guard lk(m_);
        stop_ = true;
    }
    cv_.notify_all();
    ticker_.join();
    stream_->close();  // the stream stays, refusing writes, while anything still sends
    auto by =
        Clock::now() + std::min(ch_->options().command_timeout, std::chrono::milliseconds(500));
    for (auto& [ttl, lease] : shared_)
        if (!lease->gone) revoke(*lease, by);
}

Status Leases::grant(std::chrono::milliseconds ttl, Clock::time_point by,
                     std::shared_ptr<EtcdLease>& out) {
    const auto secs = (ttl.count() + 999) / 1000;
    {
        std::lock_guard lk(m_);
        if (min_ttl_ > 0 && secs < min_ttl_)
            return Status::error(errc::invalid_argument,
                                 fmt::format("ttl {} ms is under this etcd cluster's shortest "
                                             "lease ({} s, 1.5 election timeouts): ask for a "
                                             "ttl of at least {} s",
                                             ttl.count(), min_ttl_, min_ttl_));
    }
    etcdserverpb::LeaseGrantRequest req;
    req.set_ttl(secs);
    etcdserverpb::LeaseGrantResponse r;
    auto sent = Clock::now();
    if (Status st =
            ch_->call([&](grpc::ClientContext& c) { return ch_->lease().LeaseGrant(&c, req, &r); },
                      by, "granting a lease", Sent::write);
        !st.ok())
        return st;
    if (!r.error().empty())
        return Status::error(errc::server_error, "etcd refused a lease: " + r.error());
    auto lease = std::make_shared<EtcdLease>();
    lease->id = r.id();
    lease->ttl = std::chrono::seconds(r.ttl());
    lease->kept(sent);
    if (r.ttl() > secs) {
        // etcd rounds a short TTL up without a word: the holder would believe less than the
        // server keeps, and others would wait longer than asked. Say so instead.
        {
            std::lock_guard lk(m_);
            min_ttl_ = r.ttl();
        }
        revoke(*lease, by);
        return grant(ttl, by, out);  // fails with the minimum now known
    }
    lease->last_sent_ = sent.time_since_epoch().count();
    std::lock_guard lk(m_);
    by_id_[lease->id] = lease;
    out = std::move(lease);
    return {};
}

Status Leases::shared(std::chrono::milliseconds ttl, Clock::time_point by,
                      std::shared_ptr<EtcdLease>& out) {
    const auto secs = (ttl.count() + 999) / 1000;
    std::lock_guard g(grant_m_);
    {
        std::lock_guard lk(m_);
        auto it = shared_.find(secs);
        if (it != shared_.end() && !it->second->dead(Clock::now())) {
            out = it->second;
            return {};
        }
    }
    std::shared_ptr<EtcdLease> lease;
    if (Status st = grant(ttl, by, lease); !st.ok()) return st;
    lease->background = true;
    std::lock_guard lk(m_);
    shared_[secs] = lease;
    out = std::move(lease);
    return {};
}

Status Leases::own(std::chrono::milliseconds ttl, Clock::time_point by,
                   std::shared_ptr<EtcdLease>& out) {
    return grant(ttl, by, out);
}

Status Leases::adopt(std::int64_t id, Clock::time_point by, std::shared_ptr<EtcdLease>& out) {
    {
        std::lock_guard lk(m_);
        if (auto it = by_id_.find(id); it != by_id_.end() && (out = it->second.lock())) return {};
    }
    etcdserverpb::LeaseTimeToLiveRequest req;
    req.set_id(id);
    etcdserverpb::LeaseTimeToLiveResponse r;
    auto sent = Clock::now();
    if (Status st = ch_->call(
            [&](grpc::ClientContext& c) { return ch_->lease().LeaseTimeToLive(&c, req, &r); }, by,
            "reading a lease", Sent::read);
        !st.ok())
        return st;
    if (r.ttl() <= 0) return Status::error(errc::not_owner, "the holder's etcd lease is gone");
    auto lease = std::make_shared<EtcdLease>();
    lease->id = id;
    lease->ttl = std::chrono::seconds(r.grantedttl());
    // The server keeps it r.ttl() from our question at least: kept_from + ttl is no later.
    lease->kept(sent - (lease->ttl - std::chrono::seconds(r.ttl())));
    lease->last_sent_ = sent.time_since_epoch().count();
    std::lock_guard lk(m_);
    by_id_[id] = lease;
    out = std::move(lease);
    return {};
}

std::shared_ptr<Leases::Pending> Leases::send(const std::shared_ptr<EtcdLease>& lease) {
    auto p = std::make_shared<Pending>();
    p->lease = lease;
    p->sent = Clock::now();
    lease->last_sent_ = p->sent.time_since_epoch().count();
    {
        std::lock_guard lk(m_);
        pending_[lease->id].push_back(p);
    }
    etcdserverpb::LeaseKeepAliveRequest req;
    req.set_id(lease->id);
    if (!stream_->write(req)) {
        std::lock_guard lk(m_);
        if (!p->done) {
            p->done = true;
            p->failed = Status::error(
                errc::connection_lost,
                fmt::format("the keepalive stream to etcd ({}) is broken", ch_->describe()));
            std::erase(pending_[lease->id], p);
        }
    }
    return p;
}

std::vector<Verdict> Leases::keep(std::span<EtcdLease* const> leases, Clock::time_point by,
                                  const std::shared_ptr<EtcdLease>& foreign) {
    std::vector<std::shared_ptr<Pending>> sent;
    sent.reserve(leases.size());
    for (auto* l : leases) {
        std::shared_ptr<EtcdLease> lease;
        {
            std::lock_guard lk(m_);
            if (auto it = by_id_.find(l->id); it != by_id_.end()) lease = it->second.lock();
        }
        if (!lease && foreign.get() == l) lease = foreign;
        sent.push_back(lease ? send(lease) : nullptr);
    }
    std::vector<Verdict> out;
    out.reserve(leases.size());
    std::unique_lock lk(m_);
    for (auto& p : sent) {
        if (!p) {
            out.push_back(Verdict::no());
            continue;
        }
        cv_.wait_until(lk, by, [&] { return p->done || stop_; });  // by is on the steady clock
        if (!p->done)
            out.push_back(Verdict::unknown(Status::error(
                errc::timeout,
                fmt::format("etcd ({}) did not answer a keepalive in time", ch_->describe()))));
        else if (!p->failed.ok())
            out.push_back(Verdict::unknown(p->failed));
        else
            out.push_back(p->ttl > 0 ? Verdict::yes() : Verdict::no());
    }
    return out;
}

void Leases::answered(const etcdserverpb::LeaseKeepAliveResponse& r) {
    std::shared_ptr<EtcdLease> lease;
    bool gone = false;
    {
        std::lock_guard lk(m_);
        auto it = pending_.find(r.id());
        if (it == pending_.end() || it->second.empty()) return;
        auto p = it->second.front();
        it->second.erase(it->second.begin());
        p->done = true;
        p->ttl = r.ttl();
        lease = p->lease.lock();
        if (lease && r.ttl() > 0) lease->kept(p->sent);
        if (lease && r.ttl() <= 0 && !lease->gone.exchange(true)) gone = true;
    }
    cv_.notify_all();
    if (gone && on_gone_) on_gone_();
}

void Leases::broken() {
    {
        std::lock_guard lk(m_);
        for (auto& [id, ps] : pending_)
            for (auto& p : ps) {
                p->done = true;
                p->failed = Status::error(
                    errc::connection_lost,
                    fmt::format("the keepalive stream to etcd ({}) broke", ch_->describe()));
            }
        pending_.clear();
    }
    cv_.notify_all();
}

Verdict Leases::revoke(EtcdLease& lease, Clock::time_point by) {
    etcdserverpb::LeaseRevokeRequest req;
    req.set_id(lease.id);
    etcdserverpb::LeaseRevokeResponse r;
    Status st =
        ch_->call([&](grpc::ClientContext& c) { return ch_->lease().LeaseRevoke(&c, req, &r); }, by,
                  "revoking a lease", Sent::write);
    if (st.ok() || st.detail.find("lease not found") != std::string::npos) {
        bool was = lease.gone.exchange(true);
        return st.ok() && !was ? Verdict::yes() : Verdict::no();
    }
    return Verdict::unknown(std::move(st));
}

void Leases::tick_loop() {
    std::unique_lock lk(m_);
    while (!stop_) {
        cv_.wait_for(lk, kTick, [&] { return stop_; });
        if (stop_) return;
        auto now = Clock::now();
        std::vector<std::shared_ptr<EtcdLease>> due;
        bool silent = false;
        for (auto it = by_id_.begin(); it != by_id_.end();) {
            auto lease = it->second.lock();
            if (!lease || lease->gone) {
                it = by_id_.erase(it);
                continue;
            }
            ++it;
            if (!lease->background) continue;
            if (lease->dead(now)) {
                // No answer within its TTL: the server may have dropped it.
                silent |= !lease->gone.exchange(true);
                continue;
            }
            auto last = Clock::time_point(Clock::duration(lease->last_sent_.load()));
            if (now - last >= lease->ttl / 3) due.push_back(std::move(lease));
        }
        lk.unlock();
        for (auto& l : due) send(l);
        if (silent && on_gone_) on_gone_();
        lk.lock();
    }
}

}  // namespace deadbolt::detail
