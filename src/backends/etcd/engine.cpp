// Registers etcd with the engine registry (core/engines.hpp) when this library is linked in.
// deadbolt::etcd's CMake target makes every link keep this object by naming its symbol.
#include "backends/etcd/connect.hpp"
#include "core/engines.hpp"

extern "C" void deadbolt_engine_etcd() {}

namespace deadbolt::detail {
namespace {

const EngineRegistration registration{Engine{
    .name = "etcd",
    .schemes = {"etcd", "etcds"},
    .url_form = "etcd://[user:password@]host:port[,...] (etcds:// for TLS)",
    .connect = &connect_etcd,
}};

}  // namespace
}  // namespace deadbolt::detail
