#include "znodes.hpp"

#include "eventually.hpp"

using namespace std::chrono_literals;

namespace deadbolt::test {
namespace {

constexpr const char* kChildren = R"(
import sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start()
if zk.exists(sys.argv[2]):
    for c in sorted(zk.get_children(sys.argv[2])): print(c)
zk.stop()
)";

constexpr const char* kData = R"(
import sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start()
if zk.exists(sys.argv[2]): print(zk.get(sys.argv[2])[0].decode(), flush=True)
zk.stop()
)";

constexpr const char* kDelete = R"(
import sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start(); zk.delete(sys.argv[2]); zk.stop()
)";

}  // namespace

std::string data(const ZkEnsemble& zk, const std::string& path) {
    std::string out;
    zk.kazoo(kData, {path}, &out);
    return out;
}

void delete_node(const ZkEnsemble& zk, const std::string& path) {
    EXPECT_EQ(zk.kazoo(kDelete, {path}), 0) << "deleting " << path;
}

std::vector<std::string> children(const ZkEnsemble& zk, const std::string& path) {
    std::string out;
    zk.kazoo(kChildren, {path}, &out);
    std::vector<std::string> lines;
    for (std::size_t at = 0; at < out.size();) {
        auto nl = out.find('\n', at);
        if (nl == std::string::npos) nl = out.size();
        if (nl > at) lines.push_back(out.substr(at, nl - at));
        at = nl + 1;
    }
    return lines;
}

std::string node_of(const ZkEnsemble& zk, const std::string& dir) {
    auto kids = children(zk, dir);
    EXPECT_EQ(kids.size(), 1u) << dir;
    return kids.empty() ? dir : dir + "/" + kids.front();
}

testing::AssertionResult queued(const ZkEnsemble& zk, const std::string& path, std::size_t n) {
    std::vector<std::string> seen;
    if (eventually([&] { return (seen = children(zk, path)).size() == n; }, 30s))
        return testing::AssertionSuccess();
    std::string all;
    for (const auto& c : seen) all += " " + c;
    return testing::AssertionFailure() << "expected " << n << " children under " << path << ", saw "
                                       << seen.size() << ":" << all;
}

long packets(const ZkEnsemble& zk) {
    long sum = 0;
    for (int i = 0; i < 3; ++i) {
        auto text = zk.ask(i, "mntr");
        auto at = text.find("zk_packets_received");
        if (at != std::string::npos) sum += std::stol(text.substr(text.find('\t', at) + 1));
    }
    return sum;
}

}  // namespace deadbolt::test
