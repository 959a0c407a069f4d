#include "core/client_impl.hpp"

#include "core/token.hpp"

namespace deadbolt::detail {

ClientImpl::ClientImpl(ClientOptions o, const MakeStore& make_store)
    : options(std::move(o)),
      id(random_token()),
      store(make_store(*this)),
      renewer(std::make_shared<Renewer>(store, options.clock)),
      doubts_(std::make_shared<DoubtGate>()) {
    doubts_->renewer = renewer;
    // An engine's thread hands a doubt to the renewer's thread and goes on: it checks nothing
    // itself, so no lease (and no client) ever ends on an engine's thread.
    store->on_doubt = [gate = doubts_] { gate->doubt({}); };
    store->on_doubt_of = [gate = doubts_](Store::Concerns concerns) {
        gate->doubt(std::move(concerns));
    };
}

void ClientImpl::DoubtGate::doubt(Store::Concerns concerns) noexcept {
    std::lock_guard lk(m);
    if (closed) return;
    if (auto r = renewer.lock()) r->doubt(std::move(concerns));
}

ClientImpl::~ClientImpl() {
    {
        // A doubt in flight holds the renewer, and through it the store: were it the last, the
        // store would end on its own engine thread, which cannot join itself. Wait for it.
        std::lock_guard lk(doubts_->m);
        doubts_->closed = true;
    }
    store->stop();  // no more doubts: nothing follows the engine's moves any more
    renewer->stop();
}

EventLoop& ClientImpl::loop() {
    std::lock_guard lk(loop_m_);
    if (!loop_) loop_ = std::make_unique<EventLoop>(options.loop_spin);
    return *loop_;
}

int ClientImpl::reentrant_holds(std::string_view name, std::string_view owner) const noexcept {
    std::lock_guard lk(reentrant_m_);
    auto it = reentrant_holds_.find(std::pair(name, owner));
    return it == reentrant_holds_.end() ? 0 : it->second;
}

void ClientImpl::count_reentrant_hold_on(std::string_view name, std::string_view owner) {
    std::lock_guard lk(reentrant_m_);
    if (auto it = reentrant_holds_.find(std::pair(name, owner)); it != reentrant_holds_.end())
        ++it->second;
    else
        reentrant_holds_.emplace(std::pair(std::string(name), std::string(owner)), 1);
}

void ClientImpl::count_reentrant_hold_off(std::string_view name, std::string_view owner) noexcept {
    std::lock_guard lk(reentrant_m_);
    auto it = reentrant_holds_.find(std::pair(name, owner));
    if (it != reentrant_holds_.end() && --it->second <= 0) reentrant_holds_.erase(it);
}

}  // namespace deadbolt::detail
