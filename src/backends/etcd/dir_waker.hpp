// DirWaker: a watcher's wake-up (an election's observers, a latch's waiters): any change of
// the keys in [key, end) after the revision the last look saw. The watch is one-shot; each
// look re-arms it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <string>

#include "backends/etcd/watches.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class DirWaker final : public Waker {
  public:
    /// end empty: key alone.
    DirWaker(std::shared_ptr<Watches> w, std::string key, std::string end, std::stop_token cancel);
    ~DirWaker() override { disarm(); }
    DirWaker(const DirWaker&) = delete;
    DirWaker& operator=(const DirWaker&) = delete;

    /// A look saw the directory as of revision: from now on, wake at a change after it.
    void looked(std::int64_t revision);
    Status arm(Clock::time_point until) override;
    void disarm() noexcept override;
    void wait(Clock::time_point until) override;

  private:
    void rewatch();

    std::shared_ptr<Watches> watches_;
    const std::string key_, end_;
    std::stop_token cancel_;
    std::mutex m_;
    std::condition_variable cv_;
    bool armed_ = false, woken_ = false;
    std::int64_t seen_ = 0;      // the last look's revision
    std::int64_t watch_id_ = 0;  // the watch armed now; 0 = none
};

}  // namespace deadbolt::detail
