// Background: a thread that its owner may end from the thread itself (the last client handle
// can die inside the thread's own work). There it cannot be joined, and a detached thread
// would run on while the process exits and destroys what it still uses (an error category,
// the allocator's state: Bench.Smoke once died of that with a corrupt heap). So such a thread
// is adopted instead: joined once it has returned, at the next adoption, or at exit before
// the statics it may touch are destroyed.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

namespace deadbolt::detail {

class Background {
  public:
    Background() = default;
    /// Runs body on a new thread, named `name` (at most 15 characters; empty: unnamed) so that
    /// top -H, gdb and tests tell deadbolt's threads apart.
    explicit Background(std::function<void()> body, const char* name = "");
    Background(Background&&) noexcept = default;
    Background& operator=(Background&& other) noexcept;
    Background(const Background&) = delete;
    Background& operator=(const Background&) = delete;
    /// Adopts the thread when nobody ended it. Never throws.
    ~Background();

    /// Whether a thread was started and not ended.
    bool running() const noexcept { return thread_.joinable(); }
    std::thread::id id() const noexcept { return thread_.get_id(); }
    /// Joins the thread, or adopts it when called from the thread itself. Never throws.
    void end() noexcept;

  private:
    std::thread thread_;
    std::shared_ptr<std::atomic<bool>> returned_;  // set by the thread as its body returns
};

}  // namespace deadbolt::detail
