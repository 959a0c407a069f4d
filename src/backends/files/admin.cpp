// status, list and force-unlock on file locks: who holds a lock, from the kernel (F_OFD_GETLK)
// and the holder's token in the file; the lock files in the directory; and a force-unlock
// that puts a new file (with the same fence) in the old one's place, so that new holders lock
// the new file, and the old holder finds at its next renewal that its file is not the one at
// the path any more, and reports the lock lost.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backends/files/names.hpp"
#include "backends/files/store.hpp"
#include "core/name_pattern.hpp"
#include "core/token.hpp"

namespace deadbolt::detail {

Status FileStore::statuses(const std::vector<std::string>& names,
                           std::vector<std::pair<LockStatus, Status>>& out) {
    out.clear();
    for (const auto& n : names) {
        LockStatus s;
        s.kind = "free";
        std::shared_ptr<LockFile> f;
        Status st = LockFile::open_to_read(path(n), f);
        short type = F_UNLCK;
        std::string token;
        if (st.ok() && f) st = f->probe(0, type);
        if (st.ok() && f) st = f->read(s.last_fence, token);
        if (st.ok() && type != F_UNLCK) {
            s.held = true;
            s.ttl = std::chrono::milliseconds(-1);  // until its holder lets go or dies
            s.holders = 1;
            s.kind = type == F_RDLCK ? "readers" : "mutex";
            if (type == F_WRLCK) {
                Holder h;
                h.ttl = s.ttl;
                if (auto o = token_origin(token)) {
                    h.host = o->host;
                    h.pid = o->pid;
                } else {
                    h.client = "flock(1) or another program";
                }
                s.held_by.push_back(std::move(h));
            }
        }
        out.emplace_back(std::move(s), std::move(st));
    }
    return {};
}

Status FileStore::lock_names(std::string_view pattern, std::vector<std::string>& names) {
    names.clear();
    DIR* d = ::opendir(dir_.c_str());
    if (d == nullptr)
        return Status::error(errc::server_error,
                             fmt::format("cannot list {}: {}", dir_, std::strerror(errno)));
    while (auto* e = ::readdir(d)) {
        auto name = name_of_lock_file(client_.options.key_prefix, e->d_name);
        if (!name) continue;
        std::shared_ptr<LockFile> f;
        short type = F_UNLCK;
        if (!LockFile::open_to_read(dir_ + "/" + e->d_name, f).ok() || !f ||
            !f->probe(0, type).ok() || type == F_UNLCK)
            continue;  // list shows held locks, as on the other engines
        if (name_matches(pattern, *name)) names.push_back(std::move(*name));
    }
    ::closedir(d);
    return {};
}

Status FileStore::force_unlock(const std::string& name, std::string& kind) {
    std::vector<std::pair<LockStatus, Status>> st;
    (void)statuses({name}, st);
    if (!st.front().second.ok()) return st.front().second;
    kind = st.front().first.kind;
    if (!st.front().first.held) return {};
    const std::string p = path(name), tmp = p + ".force";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return Status::error(errc::permission_denied,
                             fmt::format("cannot force-unlock {}: {}", p, std::strerror(errno)));
    ::fchmod(fd, 0666);
    auto text = fmt::format("{} \n", st.front().first.last_fence);  // fences go on from here
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
              ::fdatasync(fd) == 0;
    ::close(fd);
    if (!ok || ::rename(tmp.c_str(), p.c_str()) != 0) {
        ::unlink(tmp.c_str());
        return Status::error(errc::permission_denied,
                             fmt::format("cannot force-unlock {}: {}", p, std::strerror(errno)));
    }
    return {};
}

}  // namespace deadbolt::detail
