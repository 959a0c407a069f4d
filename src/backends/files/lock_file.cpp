#include "backends/files/lock_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace deadbolt::detail {
namespace {

// Where the lock bytes start: far past any content, so that writing it takes no lock.
constexpr off_t kLockBase = off_t{1} << 30;

Status failed(std::string_view what, const std::string& path) {
    int e = errno;
    auto code =
        e == EACCES || e == EPERM || e == EROFS ? errc::permission_denied : errc::server_error;
    return Status::error(code, fmt::format("{} {}: {}{}", what, path, std::strerror(e),
                                           code == errc::permission_denied
                                               ? " (the lock directory must be writable by "
                                                 "every process that locks there)"
                                               : ""));
}

std::string dir_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status LockFile::open(const std::string& path, std::shared_ptr<LockFile>& out) {
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            ::fchmod(fd, 0666);  // whatever the umask: every user of the directory locks here
            int dir = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dir >= 0) {
                ::fsync(dir);
                ::close(dir);
            }
        } else if (errno == EEXIST) {
            fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        }
    }
    if (fd < 0) return failed("cannot open the lock file", path);
    out.reset(new LockFile(fd, path));
    return {};
}

Status LockFile::open_to_read(const std::string& path, std::shared_ptr<LockFile>& out) {
    out.reset();
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return {};
    if (fd < 0) return failed("cannot read the lock file", path);
    out.reset(new LockFile(fd, path));
    return {};
}

LockFile::~LockFile() {
    if (fd_ >= 0) ::close(fd_);
}

Status LockFile::try_lock(int slot, bool shared, bool& taken) {
    struct flock fl {};
    fl.l_type = shared ? F_RDLCK : F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = kLockBase + slot;
    fl.l_len = 1;
    taken = ::fcntl(fd_, F_OFD_SETLK, &fl) == 0;
    if (taken || errno == EAGAIN || errno == EACCES) return {};
    return failed("cannot lock", path_);
}

void LockFile::unlock(int slot) noexcept {
    struct flock fl {};
    fl.l_type = F_UNLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = kLockBase + slot;
    fl.l_len = 1;
    (void)::fcntl(fd_, F_OFD_SETLK, &fl);
}

void LockFile::poke(const std::string& path) noexcept {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
}

Status LockFile::probe(int slot, short& type) const {
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = kLockBase + slot;
    fl.l_len = 1;
    if (::fcntl(fd_, F_OFD_GETLK, &fl) != 0) return failed("cannot look at", path_);
    type = fl.l_type;
    return {};
}

Status LockFile::read(std::uint64_t& fence, std::string& token) const {
    char buf[512];
    auto n = ::pread(fd_, buf, sizeof buf - 1, 0);
    if (n < 0) return failed("cannot read", path_);
    std::string_view text(buf, static_cast<std::size_t>(n));
    fence = 0;
    token.clear();
    auto sp = text.find(' ');
    auto [p, ec] = std::from_chars(text.data(), text.data() + std::min(sp, text.size()), fence);
    (void)p;
    if (ec != std::errc{}) fence = 0;
    if (sp != std::string_view::npos) {
        auto rest = text.substr(sp + 1);
        token = std::string(rest.substr(0, rest.find('\n')));
    }
    return {};
}

Status LockFile::write(std::uint64_t fence, std::string_view token) {
    auto text = fmt::format("{} {}\n", fence, token);
    if (::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
        ::ftruncate(fd_, static_cast<off_t>(text.size())) != 0 || ::fdatasync(fd_) != 0)
        return failed("cannot write", path_);
    return {};
}

bool LockFile::still_at(const std::string& path) const {
    struct stat mine {
    }, there{};
    return ::fstat(fd_, &mine) == 0 && ::stat(path.c_str(), &there) == 0 &&
           mine.st_ino == there.st_ino && mine.st_dev == there.st_dev;
}

}  // namespace deadbolt::detail
