#include "backends/etcd/watches.hpp"

#include <vector>

namespace deadbolt::detail {

Watches::Watches(std::shared_ptr<EtcdChannel> ch) {
    auto* stub = &ch->watch();
    stream_ = std::make_unique<WatchStream>(
        std::move(ch), [stub](grpc::ClientContext& ctx) { return stub->Watch(&ctx); },
        [this](const etcdserverpb::WatchResponse& r) { message(r); }, [this] { broken(); });
}

Watches::~Watches() {
    stream_->close();  // joins the reader (no fired() after this) while stream_ still points
}

std::int64_t Watches::add(etcdserverpb::WatchRequest& req, std::function<void()> fired) {
    std::int64_t id = 0;
    {
        std::lock_guard lk(m_);
        id = next_id_++;
        watching_.emplace(id, std::move(fired));
    }
    req.mutable_create_request()->set_watch_id(id);
    if (!stream_->write(req)) fire(id);  // broken: look again (the reader reopens on the next)
    return id;
}

std::int64_t Watches::on_delete(const std::string& key, const std::string& end, std::int64_t from,
                                std::function<void()> fired) {
    return create(key, end, from, true, std::move(fired));
}

std::int64_t Watches::on_change(const std::string& key, const std::string& end, std::int64_t from,
                                std::function<void()> fired) {
    return create(key, end, from, false, std::move(fired));
}

etcdserverpb::WatchRequest Watches::create_request(const std::string& key, const std::string& end,
                                                   std::int64_t from, bool deletes_only) {
    etcdserverpb::WatchRequest req;
    auto* c = req.mutable_create_request();
    c->set_key(key);
    c->set_range_end(end);
    c->set_start_revision(from);
    if (deletes_only) c->add_filters(etcdserverpb::WatchCreateRequest::NOPUT);
    return req;
}

std::int64_t Watches::create(const std::string& key, const std::string& end, std::int64_t from,
                             bool deletes_only, std::function<void()> fired) {
    auto req = create_request(key, end, from, deletes_only);
    return add(req, std::move(fired));
}

void Watches::cancel(std::int64_t id) noexcept {
    bool was = false;
    {
        std::lock_guard lk(m_);
        was = watching_.erase(id) > 0;
    }
    { std::lock_guard wait_for_fired(fire_m_); }
    if (was) send_cancel(id);
}

void Watches::send_cancel(std::int64_t watch) noexcept {
    etcdserverpb::WatchRequest req;
    req.mutable_cancel_request()->set_watch_id(watch);
    stream_->write(req);  // a broken stream has forgotten it anyway
}

void Watches::fire(std::int64_t id) {
    std::function<void()> f;
    std::lock_guard firing(fire_m_);
    {
        std::lock_guard lk(m_);
        auto it = watching_.find(id);
        if (it == watching_.end()) return;
        f = std::move(it->second);
        watching_.erase(it);
    }
    f();
}

void Watches::message(const etcdserverpb::WatchResponse& r) {
    if (own_message(r)) return;
    // A delete-only watch sees only deletes; a change watch, any event.
    bool changed = r.events_size() > 0;
    if (!changed && !r.canceled()) return;
    fire(r.watch_id());
    if (changed && !r.canceled()) {
        etcdserverpb::WatchRequest req;
        req.mutable_cancel_request()->set_watch_id(r.watch_id());
        stream_->write(req);
    }
}

void Watches::broken() {
    own_broken();
    std::vector<std::int64_t> ids;
    {
        std::lock_guard lk(m_);
        for (auto& [id, f] : watching_) ids.push_back(id);
    }
    for (auto id : ids) fire(id);
}

}  // namespace deadbolt::detail
