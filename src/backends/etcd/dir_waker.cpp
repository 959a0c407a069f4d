#include "backends/etcd/dir_waker.hpp"

namespace deadbolt::detail {

DirWaker::DirWaker(std::shared_ptr<Watches> w, std::string key, std::string end,
                   std::stop_token cancel)
    : watches_(std::move(w)),
      key_(std::move(key)),
      end_(std::move(end)),
      cancel_(std::move(cancel)) {}

void DirWaker::looked(std::int64_t revision) {
    {
        std::lock_guard lk(m_);
        seen_ = revision;
    }
    rewatch();
}

Status DirWaker::arm(Clock::time_point /*until*/) {
    {
        std::lock_guard lk(m_);
        armed_ = true;
    }
    rewatch();
    return {};
}

void DirWaker::rewatch() {
    std::int64_t from = 0;
    {
        std::lock_guard lk(m_);
        if (!armed_ || watch_id_ != 0 || seen_ == 0) return;
        from = seen_ + 1;
        watch_id_ = -1;  // being made
    }
    auto id = watches_->on_change(key_, end_, from, [this] {
        std::lock_guard lk(m_);
        woken_ = true;
        watch_id_ = 0;
        cv_.notify_all();
    });
    std::lock_guard lk(m_);
    if (watch_id_ == -1) watch_id_ = id;  // else it fired already
}

void DirWaker::disarm() noexcept {
    std::int64_t id = 0;
    {
        std::lock_guard lk(m_);
        armed_ = false;
        id = watch_id_;
        watch_id_ = 0;
    }
    if (id > 0) watches_->cancel(id);
}

void DirWaker::wait(Clock::time_point until) {
    std::stop_callback wake(cancel_, [this] {  // before the lock: it may run at once
        std::lock_guard g(m_);
        cv_.notify_all();
    });
    std::unique_lock lk(m_);
    cv_.wait_until(lk, until, [&] { return woken_ || cancel_.stop_requested(); });
    woken_ = false;
}

}  // namespace deadbolt::detail
