// Registers memcached with the engine registry (core/engines.hpp) when this library is linked
// in. deadbolt::memcached's CMake target makes every link keep this object by naming its
// symbol.
#include "backends/memcached/connect.hpp"
#include "core/engines.hpp"

extern "C" void deadbolt_engine_memcached() {}

namespace deadbolt::detail {
namespace {

const EngineRegistration registration{Engine{
    .name = "memcached",
    .schemes = {"memcached"},
    .url_form = "memcached://host[:port][,host[:port]...][?prefix=...]",
    .connect = &connect_mc,
}};

}  // namespace
}  // namespace deadbolt::detail
