// Scenarios 1-2 against memcached with no library logic: the meta protocol's add of a token
// with a TTL and a delete, one round trip each, a connection per thread (the least a lock
// there can cost: no fence, no owner check on the delete). With --statements 1, the commands
// deadbolt sends for a Mutex instead: the add, a read of the item's CAS and the fence drawn,
// pipelined in one round trip, and a delete by that CAS (what they cost the server and the
// client's kernel, apart from the library's logic).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cstdlib>
#include <regex>
#include <stdexcept>
#include <string>

#include "scenarios.hpp"

namespace deadbolt::bench {
namespace {

// Sends req and reads one reply line.
std::string round_trip(int fd, const std::string& req) {
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
        throw std::runtime_error("bench: memcached: send failed");
    std::string got;
    char buf[256];
    while (got.find("\r\n") == std::string::npos) {
        auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) throw std::runtime_error("bench: memcached: the connection closed");
        got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
}

// Sends req and reads n replies (a VA reply's data too): the CAS of the first VA's c flag.
std::uint64_t round_trip_n(int fd, const std::string& req, int n, std::string& got) {
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
        throw std::runtime_error("bench: memcached: send failed");
    got.clear();
    std::size_t at = 0;
    std::uint64_t cas = 0;
    char buf[512];
    for (int done = 0; done < n;) {
        auto eol = got.find("\r\n", at);
        std::size_t end = eol;
        if (eol != std::string::npos && got.compare(at, 3, "VA ") == 0) {
            std::size_t size = std::strtoul(got.c_str() + at + 3, nullptr, 10);
            end = eol + 2 + size <= got.size() ? eol + 2 + size : std::string::npos;
            if (auto c = got.find(" c", at); cas == 0 && c < eol)
                cas = std::strtoull(got.c_str() + c + 2, nullptr, 10);
        }
        if (end != std::string::npos && end + 2 <= got.size()) {
            at = end + 2;
            ++done;
            continue;
        }
        auto r = ::recv(fd, buf, sizeof buf, 0);
        if (r <= 0) throw std::runtime_error("bench: memcached: the connection closed");
        got.append(buf, static_cast<std::size_t>(r));
    }
    if (got.rfind("STORED", 0) != 0) throw std::runtime_error("bench: memcached: not stored");
    return cas;
}

}  // namespace

int cycle_raw_mc(const Args& a) {
    static const std::regex form(R"(^memcached://([0-9.]+):(\d+)/?$)");
    std::smatch m;
    if (!std::regex_match(a.url, m, form))
        throw std::runtime_error("bench: --url must be memcached://ip:port");
    run_cycles(a, [&](int t, std::vector<double>& lat) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(m[2].str())));
        ::inet_pton(AF_INET, m[1].str().c_str(), &addr.sin_addr);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error("bench: memcached: cannot connect");
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        const std::string key = a.key + ":" + std::to_string(a.id) + ":" + std::to_string(t);
        const std::string token = "host:1234:0123456789abcdef0123456789abcdef";
        const std::string add =
            "ms " + key + " " + std::to_string(token.size()) + " T30 ME\r\n" + token + "\r\n";
        const std::string del = "md " + key + "\r\n";
        // The fence key and floor as deadbolt's (a floor in microseconds: as long a number).
        const std::string take = "add " + key + " 0 32 " + std::to_string(token.size()) + "\r\n" +
                                 token + "\r\nmg " + key + " v c t\r\nma ~f~" + key + " N0 J" +
                                 std::to_string(now_ns() / 1000) + " v\r\n";
        std::string got;
        while (now_ns() < a.until_ns) {
            auto t0 = now_ns();
            if (a.statements) {
                auto cas = round_trip_n(fd, take, 3, got);
                spend_user_cpu(a.spend_us / 2);
                if (round_trip(fd, "md " + key + " C" + std::to_string(cas) + "\r\n")
                        .rfind("HD", 0) != 0)
                    throw std::runtime_error("bench: memcached: the delete by CAS was refused");
                spend_user_cpu(a.spend_us / 2);
            } else {
                if (round_trip(fd, add).rfind("HD", 0) != 0)
                    throw std::runtime_error("bench: memcached: the raw add was refused");
                round_trip(fd, del);
            }
            lat.push_back(double(now_ns() - t0) / 1000);
        }
        ::close(fd);
    });
    return 0;
}

}  // namespace deadbolt::bench
