#include "backends/files/claim.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <functional>

namespace deadbolt::detail {
namespace {

// The writers' gate: a byte past a semaphore's largest count.
constexpr int kGate = 1 << 20;
// A release or a death closes the holder's descriptor; a force-unlock replaces the file (its
// link count drops: IN_ATTRIB) or moves it.
constexpr std::uint32_t kFrees = IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;

std::string reentry_key(const std::string& path, const std::string& owner) {
    return path + '\n' + owner;
}

}  // namespace

FileClaim::FileClaim(FileStore& store, const LockSpec& spec, std::stop_token cancel)
    : store_(store), spec_(spec), cancel_(std::move(cancel)) {
    if (spec.shape == Shape::multi) {
        for (const auto& n : spec.names) paths_.push_back(store.path(n));
    } else {
        paths_.push_back(store.path(spec.name));
    }
    // A holder's end is announced like a release (the kernel closes its file): no timed look.
    traits_.expiry_wakes = true;
}

FileClaim::~FileClaim() {
    disarm();
}

Status FileClaim::take(const std::string& token, std::vector<std::shared_ptr<LockFile>>& got,
                       Fences& f) {
    const bool shared = spec_.shape == Shape::read;
    const bool fenced = !shared && spec_.shape != Shape::permits;
    if (files_.size() != paths_.size()) {
        files_.clear();
        for (const auto& path : paths_) {
            std::shared_ptr<LockFile> file;
            if (Status st = LockFile::open(path, file); !st.ok()) return files_.clear(), st;
            files_.push_back(std::move(file));
        }
    }
    if (files_.size() > 1) {
        // A MultiLock looks before it takes: one that took a name and let go of it would
        // have to wake that name's waiters (poke), which could wake it in turn.
        for (const auto& file : files_) {
            short type = 0;
            if (Status st = file->probe(0, type); !st.ok()) return st;
            if (type != F_UNLCK) return {};
        }
    }
    // Writers are not starved: a writer that has to wait holds the gate (slot kGate) while it
    // does, and a reader comes in only through an open gate.
    const bool writer = spec_.shape == Shape::write || spec_.shape == Shape::exclusive;
    if ((writer || shared) && files_.size() == 1) {
        bool open_gate = false;
        if (Status st = files_.front()->try_lock(kGate, shared, open_gate); !st.ok()) return st;
        if (!open_gate) return {};  // a writer waits (or, for a writer, a reader is passing)
    }
    std::size_t taken_n = 0;
    for (auto& file : files_) {
        bool taken = false;
        if (spec_.shape == Shape::permits) {
            for (int slot = 0; slot < spec_.permits && !taken; ++slot)
                if (Status st = file->try_lock(slot, false, taken); !st.ok()) return st;
        } else if (Status st = file->try_lock(0, shared, taken); !st.ok()) {
            return st;
        }
        if (!taken) break;
        ++taken_n;
    }
    if (shared && files_.size() == 1) files_.front()->unlock(kGate);  // a reader passes through
    if (taken_n < files_.size()) {
        for (std::size_t i = 0; i < taken_n; ++i) {
            files_[i]->unlock(0);
            LockFile::poke(paths_[i]);
        }
        return {};  // a writer keeps the gate while it waits
    }
    if (writer && files_.size() == 1) files_.front()->unlock(kGate);
    got = std::move(files_);
    files_.clear();
    if (!fenced) return {};
    // Under the lock: the next fence is the file's plus one, made durable before it is used.
    for (auto& file : got) {
        std::uint64_t fence = 0;
        std::string previous;
        if (Status st = file->read(fence, previous); !st.ok()) return got.clear(), st;
        if (Status st = file->write(fence + 1, token); !st.ok()) return got.clear(), st;
        f.each.push_back(fence + 1);
    }
    f.fence = *std::max_element(f.each.begin(), f.each.end());
    if (spec_.shape != Shape::multi) f.each.clear();
    return {};
}

void FileClaim::attempt(const std::string& token, std::chrono::milliseconds /*keep*/, Attempted& a,
                        Fences& f) {
    auto h = std::make_shared<FileHolding>();
    h->paths = paths_;
    h->token = token;
    h->shared = spec_.shape == Shape::read || spec_.shape == Shape::permits;
    grants_[token] = h;
    if (spec_.shape == Shape::reentrant) {
        // The kernel's locks belong to the process: an owner's holds are counted here.
        h->reentrant = reentry_key(paths_.front(), spec_.owner);
        std::lock_guard lock(FileStore::reentries_mutex());
        auto& r = FileStore::reentries()[h->reentrant];
        if (r.holds == 0) {
            Fences got;
            std::vector<std::shared_ptr<LockFile>> files;
            if (a.status = take(token, files, got); !a.status.ok() || files.empty()) {
                FileStore::reentries().erase(h->reentrant);
                a.pttl = std::chrono::milliseconds(-1);
                return;
            }
            r.files = std::move(files);
            r.fence = got.fence;
        }
        ++r.holds;
        h->hold(r.files);
        f.fence = r.fence;
        a.acquired = true;
        return;
    }
    std::vector<std::shared_ptr<LockFile>> files;
    if (a.status = take(token, files, f); !a.status.ok()) return;
    if (files.empty()) {
        a.pttl = std::chrono::milliseconds(-1);  // a holder has no expiry: its end is announced
        return;
    }
    h->hold(std::move(files));
    if (spec_.shape == Shape::permits) store_.note_permit(token, h);
    a.acquired = true;
}

std::shared_ptr<Holding> FileClaim::holding(const std::string& token,
                                            std::chrono::milliseconds /*keep*/,
                                            std::uint64_t /*fence*/) const {
    if (auto it = grants_.find(token); it != grants_.end()) return it->second;
    return std::make_shared<FileHolding>();  // holds nothing: its release is a no-op
}

Status FileClaim::arm(Clock::time_point /*until*/) {
    if (inotify_ < 0) {
        inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        cancel_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (inotify_ < 0 || cancel_fd_ < 0) {
            disarm();
            return Status::error(errc::server_error, "cannot watch the lock files (inotify)");
        }
        int fd = cancel_fd_;
        on_cancel_ = std::make_unique<std::stop_callback<std::function<void()>>>(
            cancel_, std::function<void()>([fd] {
                std::uint64_t one = 1;
                (void)::write(fd, &one, sizeof one);
            }));
    }
    watch_paths();
    return {};
}

void FileClaim::watch_paths() noexcept {
    for (const auto& p : paths_) (void)::inotify_add_watch(inotify_, p.c_str(), kFrees);
}

void FileClaim::disarm() noexcept {
    on_cancel_.reset();
    if (inotify_ >= 0) ::close(inotify_);
    if (cancel_fd_ >= 0) ::close(cancel_fd_);
    inotify_ = cancel_fd_ = -1;
}

void FileClaim::wait(Clock::time_point until) {
    if (inotify_ < 0) return;
    watch_paths();  // at the file now there: a force-unlock may have replaced it
    pollfd p[2] = {{inotify_, POLLIN, 0}, {cancel_fd_, POLLIN, 0}};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    int ms = left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
    if (::poll(p, 2, ms) > 0 && (p[0].revents & POLLIN) != 0) {
        char buf[4096];
        while (::read(inotify_, buf, sizeof buf) > 0) {
        }
    }
}

}  // namespace deadbolt::detail
