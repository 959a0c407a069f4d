// zk:// URLs: the ensemble to reach, its chroot, credentials, the nodes' ACL and the longest
// session to ask for. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/url_text.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::detail {

/// The port a ZooKeeper server serves clients on when the URL does not say.
constexpr std::uint16_t kZkPort = 2181;

/// A ZooKeeper server a URL names.
using ZkServer = HostPort;

/// Who may touch the nodes deadbolt creates (its contenders and the znodes it makes for them).
enum class ZkAcl : unsigned char {
    open,     ///< anyone may do anything (world:anyone:cdrwa): the default without a user
    creator,  ///< the URL's digest user all rights, anyone else read: the default with a user
};

struct ZkUrl {
    bool ok = false;
    std::string error;              // what is wrong and what to write instead, when !ok
    std::vector<ZkServer> servers;  // in the order given; the C client picks among them
    std::string chroot;             // "" or "/a/b": every path is under it
    // The longest session asked of the ensemble, and so the longest TTL a holding keeps;
    // 0: the longest the ensemble grants (its maxSessionTimeout).
    std::chrono::milliseconds session_timeout{0};
    ZkAcl acl = ZkAcl::open;  // creator when a user is given, unless acl=open says otherwise
    ClientOptions options;    // user, password, timeouts

    /// "h:p,h:p/chroot": the C client's host string.
    std::string hosts() const;
    /// "h:p,h:p" for messages.
    std::string describe() const;
};

/// zk://[user:password@]host[:port][,host[:port]...][/chroot][?opt=v&...] on top of base.
/// Options: connect_timeout, command_timeout, session_timeout, acl (open, creator), user,
/// password. Unknown options, a chroot with an empty part, acl=creator without a user, and TLS
/// are errors.
ZkUrl parse_zk_url(std::string_view url, const ClientOptions& base);

}  // namespace deadbolt::detail
