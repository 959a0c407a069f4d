// etcd:// and etcds:// URLs: the members to reach, credentials and options. Pure; no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/url_text.hpp"
#include "deadbolt/options.hpp"

namespace deadbolt::detail {

/// The port an etcd member serves clients on when the URL does not say.
constexpr std::uint16_t kEtcdPort = 2379;

/// An etcd member a URL names.
using EtcdMember = HostPort;

struct EtcdUrl {
    bool ok = false;
    std::string error;                // what is wrong and what to write instead, when !ok
    std::vector<EtcdMember> members;  // in the order given; any one will do
    ClientOptions options;            // user, password, prefix, timeouts, TLS (etcds://)
};

/// etcd[s]://[user:password@]host[:port][,host[:port]...][/][?opt=v&...] on top of base.
/// Options: connect_timeout, command_timeout, prefix, user, password, and for etcds:// ca,
/// cert, key. Unknown options, a path, or TLS options without etcds:// are errors.
EtcdUrl parse_etcd_url(std::string_view url, const ClientOptions& base);

}  // namespace deadbolt::detail
