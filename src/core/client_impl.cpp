#include "core/client_impl.hpp"

#include "core/token.hpp"

namespace deadbolt::detail {

ClientImpl::ClientImpl(ClientOptions o, const MakeStore& make_store)
    : options(std::move(o)),
      id(random_token()),
      store(make_store(*this)),
      renewer(std::make_shared<Renewer>(store, options.clock)) {
    store->on_doubt = [weak = std::weak_ptr<Renewer>(renewer)] {
        if (auto r = weak.lock()) r->verify_all();
    };
    store->on_doubt_of = [weak = std::weak_ptr<Renewer>(renewer)](Store::Concerns concerns) {
        if (auto r = weak.lock()) r->doubt(std::move(concerns));
    };
}

ClientImpl::~ClientImpl() {
    store->stop();  // no more doubts: nothing follows the engine's moves any more
    renewer->stop();
}

EventLoop& ClientImpl::loop() {
    std::lock_guard lk(loop_m_);
    if (!loop_) loop_ = std::make_unique<EventLoop>(options.loop_spin);
    return *loop_;
}

int ClientImpl::reentrant_holds(const std::string& key, const std::string& owner, int delta) {
    std::lock_guard lk(reentrant_m_);
    auto& n = reentrant_holds_[key + '\0' + owner];
    n += delta;
    int now = n;
    if (n <= 0) reentrant_holds_.erase(key + '\0' + owner);
    return now;
}

}  // namespace deadbolt::detail
