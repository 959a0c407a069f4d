// What is under a znode, as another client (Kazoo) sees it: for the ZooKeeper tests' checks
// of the layout deadbolt leaves.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "zk_ensemble.hpp"

namespace deadbolt::test {

/// The children of path, in name order (none when it does not exist).
std::vector<std::string> children(const ZkEnsemble& zk, const std::string& path);
/// The one contender node under a lock's znode dir (a test failure when there is not exactly one).
std::string node_of(const ZkEnsemble& zk, const std::string& dir);
/// The data of path and a newline ("" when it does not exist).
std::string data(const ZkEnsemble& zk, const std::string& path);
/// Deletes path (a node without children), as an administrator or another tool would.
void delete_node(const ZkEnsemble& zk, const std::string& path);
/// Whether path has n children within 30 s (a started Kazoo process imports, connects and
/// creates its node: seconds on a loaded machine); names what it saw if not.
testing::AssertionResult queued(const ZkEnsemble& zk, const std::string& path, std::size_t n);
/// Packets every server of zk received so far (mntr's zk_packets_received; the four-letter
/// words themselves are not packets).
long packets(const ZkEnsemble& zk);

}  // namespace deadbolt::test
