#include "backends/zookeeper/descriptors.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string>

namespace deadbolt::detail {
namespace {

void close_on_exec(int fd) {
    int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

}  // namespace

std::set<int> open_descriptors() {
    std::set<int> fds;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
        auto name = e.path().filename().string();
        int fd = -1;
        if (std::from_chars(name.data(), name.data() + name.size(), fd).ec == std::errc())
            fds.insert(fd);
    }
    // The listing's own descriptor was in it, and is closed now.
    std::erase_if(fds, [](int fd) { return ::fcntl(fd, F_GETFD) < 0; });
    return fds;
}

void close_new_on_exec(const std::set<int>& before) {
    for (int fd : open_descriptors())
        if (!before.contains(fd)) close_on_exec(fd);
}

void close_peers_on_exec(const std::vector<std::uint16_t>& ports) {
    for (int fd : open_descriptors()) {
        sockaddr_storage peer{};
        socklen_t len = sizeof peer;
        if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
        std::uint16_t port = 0;
        if (peer.ss_family == AF_INET)
            port = ntohs(reinterpret_cast<const sockaddr_in*>(&peer)->sin_port);
        else if (peer.ss_family == AF_INET6)
            port = ntohs(reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_port);
        if (std::ranges::find(ports, port) != ports.end()) close_on_exec(fd);
    }
}

}  // namespace deadbolt::detail
