// One open lock file: an open file description, whose fcntl locks (F_OFD_SETLK) are its own,
// so they conflict with every other open of the file, in this process or another, and the
// kernel drops them when the description is closed, or its process dies. The locks are on
// bytes far past the content ("<fence> <token>\n", rewritten and fsync'd under the lock), one
// byte per semaphore slot.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.hpp"

namespace deadbolt::detail {

class LockFile {
  public:
    /// Opens path for locking (read-write; created with mode 0666 when missing, and then the
    /// directory is fsync'd, so that the file and its fences survive a reboot).
    static Status open(const std::string& path, std::shared_ptr<LockFile>& out);
    /// Opens path to look at it only (status): its close wakes nobody. Missing: ok, out null.
    static Status open_to_read(const std::string& path, std::shared_ptr<LockFile>& out);
    ~LockFile();
    LockFile(const LockFile&) = delete;
    LockFile& operator=(const LockFile&) = delete;

    /// Takes byte slot of the lock region, shared or exclusive, without waiting.
    Status try_lock(int slot, bool shared, bool& taken);
    /// Lets go of slot (no close: waiters are not told; see poke).
    void unlock(int slot) noexcept;
    /// Wakes the waiters watching path, as a close after writing does.
    static void poke(const std::string& path) noexcept;
    /// What holds slot: F_UNLCK, F_RDLCK or F_WRLCK (as an exclusive request would see it).
    Status probe(int slot, short& type) const;
    /// The content's fence and token (0 and "" for an empty file).
    Status read(std::uint64_t& fence, std::string& token) const;
    /// Replaces the content and makes it durable (fdatasync).
    Status write(std::uint64_t fence, std::string_view token);
    /// Whether path still names this very file (force-unlock puts a new one there).
    bool still_at(const std::string& path) const;
    const std::string& path() const { return path_; }

  private:
    LockFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    int fd_ = -1;
    std::string path_;
};

}  // namespace deadbolt::detail
