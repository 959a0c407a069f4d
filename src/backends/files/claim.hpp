// FileClaim: one acquisition of file locks. An attempt tries the locks without waiting (a
// MultiLock's in the names' order, letting go of all if one is taken); a waiter watches its
// lock files with inotify for a close (the holder's release, or its death) or a replacement
// (force-unlock), and looks again then: the kernel announces every way a lock frees.
#pragma once

#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/files/holding.hpp"
#include "backends/files/store.hpp"
#include "core/lock_spec.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class FileClaim final : public Claim {
  public:
    FileClaim(FileStore& store, const LockSpec& spec, std::stop_token cancel);
    ~FileClaim() override;
    FileClaim(const FileClaim&) = delete;
    FileClaim& operator=(const FileClaim&) = delete;

    const ClaimTraits& traits() const override { return traits_; }
    void attempt(const std::string& token, std::chrono::milliseconds keep, Attempted& a,
                 Fences& f) override;
    Status confirm() override { return {}; }
    std::shared_ptr<Holding> holding(const std::string& token, std::chrono::milliseconds keep,
                                     std::uint64_t fence) const override;
    std::shared_ptr<Holding> waiter(const std::string& /*token*/,
                                    std::chrono::milliseconds /*keep*/) const override {
        return nullptr;  // a waiter leaves nothing behind
    }

    Status arm(Clock::time_point until) override;
    void disarm() noexcept override;
    void wait(Clock::time_point until) override;

  private:
    // Takes every lock the spec names, or none: ok with got empty when one is taken.
    Status take(const std::string& token, std::vector<std::shared_ptr<LockFile>>& got, Fences& f);
    // Re-points the watches at the files now at the paths (a force-unlock replaced one).
    void watch_paths() noexcept;

    FileStore& store_;
    const LockSpec spec_;
    std::stop_token cancel_;
    ClaimTraits traits_;
    std::vector<std::string> paths_;  // in the names' order
    // Open between attempts: a waiter that closed its file after each look would wake the
    // others watching it, and they it.
    std::vector<std::shared_ptr<LockFile>> files_;
    std::map<std::string, std::shared_ptr<FileHolding>> grants_;
    int inotify_ = -1;
    int cancel_fd_ = -1;  // readable once cancel_ is requested
    std::unique_ptr<std::stop_callback<std::function<void()>>> on_cancel_;
};

}  // namespace deadbolt::detail
