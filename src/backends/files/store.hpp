// FileStore: locks of one machine kept as fcntl open-file-description locks on files in a
// directory (DESIGN section 15). The kernel frees a lock the moment its holder's process dies,
// so no TTL is needed for safety; a holder that hangs keeps its lock until it dies. Waiting
// blocks on inotify for the lock file's close (a release or a death closes it), never polls.
// Fences come from the lock file's content, rewritten and fsync'd under the lock, so they
// survive a reboot. Not for NFS or several machines.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/files/holding.hpp"
#include "core/client_impl.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

class FileStore final : public Store, public Permits, public Admin {
  public:
    FileStore(ClientImpl& c, std::string dir);

    Status supports(const LockSpec& spec) const override;
    std::unique_ptr<Claim> open(const LockSpec& spec, std::stop_token cancel) override;
    std::vector<Verdict> extend(std::span<const Renewal> rs, Clock::time_point by) override;
    std::vector<Verdict> release(std::span<const Holding* const> hs, Clock::time_point by) override;
    std::vector<Verdict> check(std::span<const Holding* const> hs, Clock::time_point by) override;
    Clock::time_point deadline() const override {
        return Clock::now() + client_.options.command_timeout;
    }
    Clock::time_point deadline_for(std::chrono::milliseconds /*ttl*/) const override {
        return deadline();
    }
    bool late_yes_is_lost() const override { return false; }
    Status keeps(Shape shape) const override;
    Status refusal(std::string_view what) const override;

    Permits* permits() override { return this; }
    Admin* admin() override { return this; }

    Status permit_release(const std::string& name, std::string_view id, bool& released) override;
    Status permit_extend(const std::string& name, std::string_view id,
                         std::chrono::milliseconds keep, bool& extended) override;
    Status permits_in_use(const std::string& name, int permits, int& in_use) override;
    Status statuses(const std::vector<std::string>& names,
                    std::vector<std::pair<LockStatus, Status>>& out) override;
    Status lock_names(std::string_view pattern, std::vector<std::string>& names) override;
    Status force_unlock(const std::string& name, std::string& kind) override;

    // For claims.
    std::string path(std::string_view name) const;
    const std::string& dir() const { return dir_; }
    /// Keeps a permit's holding findable by its token (PermitExpirableSemaphore's ids).
    void note_permit(const std::string& token, const std::shared_ptr<FileHolding>& h);
    /// A ReentrantMutex's holding in this process: how many holds key has (0: none), and its
    /// files and fence when it has some. Shared by every client of the process, as the
    /// kernel's locks are the process's.
    struct Reentry {
        std::vector<std::shared_ptr<LockFile>> files;
        std::uint64_t fence = 0;
        int holds = 0;
    };
    static std::mutex& reentries_mutex();
    static std::map<std::string, Reentry>& reentries();

  private:
    Verdict holds(const FileHolding& h) const;

    ClientImpl& client_;
    const std::string dir_;
    // Permits by token, for every client of the process: the kernel's locks are the process's.
    static std::mutex& permits_mutex();
    static std::map<std::string, std::weak_ptr<FileHolding>>& permits_by_token();
};

}  // namespace deadbolt::detail
