// What a file holding is: the open lock files whose locks it holds (one, a MultiLock's, or a
// semaphore's file with one slot), and the token it wrote; released by closing them.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/files/lock_file.hpp"
#include "core/store.hpp"

namespace deadbolt::detail {

struct FileHolding final : Holding {
    std::vector<std::string> paths;
    std::string token;
    bool shared = false;    // a reader's, or a semaphore's slot: the content is not its own
    std::string reentrant;  // a ReentrantMutex's registry key ("" for other shapes)

    /// Hands the files over to close them (released); empty once released.
    std::vector<std::shared_ptr<LockFile>> take() const {
        std::lock_guard lock(m_);
        return std::move(files_);
    }
    std::vector<std::shared_ptr<LockFile>> files() const {
        std::lock_guard lock(m_);
        return files_;
    }
    void hold(std::vector<std::shared_ptr<LockFile>> f) const {
        std::lock_guard lock(m_);
        files_ = std::move(f);
    }

  private:
    mutable std::mutex m_;
    mutable std::vector<std::shared_ptr<LockFile>> files_;
};

}  // namespace deadbolt::detail
