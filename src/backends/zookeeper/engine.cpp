// Registers ZooKeeper with the engine registry (core/engines.hpp) when this library is linked in.
// deadbolt::zookeeper's CMake target makes every link keep this object by naming its symbol.
#include "backends/zookeeper/connect.hpp"
#include "core/engines.hpp"

extern "C" void deadbolt_engine_zookeeper() {}

namespace deadbolt::detail {
namespace {

const EngineRegistration registration{Engine{
    .name = "zookeeper",
    .schemes = {"zk"},
    .url_form = "zk://[user:password@]host:port[,...][/chroot]",
    .connect = &connect_zk,
}};

}  // namespace
}  // namespace deadbolt::detail
