// Registers Redis with the engine registry (core/engines.hpp) when this library is linked in.
// deadbolt::redis's CMake target makes every link keep this object by naming its symbol.
#include "backends/redis/connect.hpp"
#include "core/engines.hpp"

extern "C" void deadbolt_engine_redis() {}

namespace deadbolt::detail {
namespace {

const EngineRegistration registration{Engine{
    .name = "redis",
    .schemes = {"redis", "rediss", "unix", "redis-sentinel", "redis-cluster", "redlock"},
    .url_form = "redis://[user[:password]@]host[:port][/db], rediss://..., unix:///path.sock, "
                "redis-sentinel://host[:port],.../master, redis-cluster://host:port,..., "
                "redlock://host:port,host:port,...",
    .connect = &connect_redis,
}};

}  // namespace
}  // namespace deadbolt::detail
