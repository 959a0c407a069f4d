#include "backends/files/connect.hpp"

#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backends/files/store.hpp"
#include "backends/files/url.hpp"
#include "client_access.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {
namespace {

[[noreturn]] void refuse(const std::string& why) {
    throw UsageError(make_error_code(errc::invalid_argument), why);
}

// Makes dir and its missing parents.
void make_dir(const std::string& dir) {
    for (std::size_t at = 1; at != std::string::npos;) {
        at = dir.find('/', at + 1);
        std::string part = dir.substr(0, at);
        if (::mkdir(part.c_str(), 0777) == 0 && at == std::string::npos)
            ::chmod(part.c_str(), 01777);  // every user may lock, none may delete another's file
        else if (errno != EEXIST && at == std::string::npos)
            refuse(fmt::format("cannot make the lock directory {}: {}", dir, std::strerror(errno)));
    }
}

}  // namespace

Client connect_file(std::string_view url, const ClientOptions& options) {
    auto parsed = parse_file_url(url, options);
    if (!parsed.ok) throw UsageError(make_error_code(errc::invalid_url), parsed.error);
    make_dir(parsed.dir);
    struct stat st {};
    if (::stat(parsed.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        refuse(
            fmt::format("{} is not a directory: a file URL names the directory that keeps "
                        "the lock files",
                        parsed.dir));
    if (::access(parsed.dir.c_str(), W_OK | X_OK) != 0)
        throw UsageError(make_error_code(errc::permission_denied),
                         fmt::format("this process may not make lock files in {}: {} (make it "
                                     "writable by every user that locks there, e.g. mode 1777)",
                                     parsed.dir, std::strerror(errno)));
    struct statfs fs {};
    if (::statfs(parsed.dir.c_str(), &fs) == 0 && fs.f_type == NFS_SUPER_MAGIC)
        refuse(
            fmt::format("{} is on NFS: its file locks are not kept by this machine's kernel "
                        "alone, and lock files there do not exclude other machines "
                        "reliably; use a local directory, or a lock server",
                        parsed.dir));
    return ClientAccess::make(std::make_shared<ClientImpl>(
        parsed.options, [&](ClientImpl& c) { return std::make_shared<FileStore>(c, parsed.dir); }));
}

}  // namespace deadbolt::detail
